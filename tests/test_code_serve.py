"""code_search.py serve: the JSON API and the page, on a real server on a free port,
called with urllib; the page also in headless Chromium when it is installed.
Standard library only."""
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from tests.support import (CHROMIUM, CODE_TOOL, ENV, NOTES_TOOL, ROOT, dump_dom, run_cli,
                           write)

from code_search import API_BODY_LIMIT

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # never a proxy
SCRIPT = '<script>document.title = "owned"</script>'


def cli(*args, **kwargs):
    return run_cli(CODE_TOOL, *args, **kwargs)


class Server:
    """A `serve` process on a free port; stopped when the test ends."""

    def __init__(self, test, *args, tool=CODE_TOOL):
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([sys.executable, str(tool), 'serve', '--port', '0',
                                         *map(str, args)], stdout=subprocess.DEVNULL,
                                        stderr=self.log, env=ENV)
        test.addCleanup(self.stop)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(rb'serve: http://[^/]+:(\d+)/', self.stderr())
            if found:
                self.port = int(found.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        test.fail(f'server did not start: {self.stderr()!r}')

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.log.close()

    def url(self, path):
        return f'http://127.0.0.1:{self.port}{path}'

    def call(self, path, data=None, headers=None, method=None):
        """(status, parsed JSON or bytes) of one request."""
        request = urllib.request.Request(self.url(path), data=data, headers=headers or {},
                                         method=method)
        try:
            with OPENER.open(request, timeout=30) as response:
                status, body, kind = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, body, kind = error.code, error.read(), error.headers
        if 'json' in kind.get('Content-Type', '') and body:
            return status, json.loads(body)
        return status, body


def make_repos(tmp):
    write(tmp / 'api' / 'billing.py', (
        'def total_with_tax(amount, rate):\n'
        '    """Total of an invoice including tax (세금 포함 합계)."""\n'
        '    return amount * (1 + rate)\n'
        '\n\n'
        'def page():\n'
        f'    return \'{SCRIPT}\'\n'))
    write(tmp / 'web' / 'cart.ts', 'export function cartTotal(rate: number) {\n'
                                   '  return 1 + rate;\n}\n')
    for name in ('api', 'web'):
        result = cli('index', tmp / name, '--out', tmp / f'{name}.json')
        assert result.returncode == 0, result.stderr


class ApiTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp()).resolve()
        make_repos(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.server = Server(self, '--index', self.tmp / 'api.json', '--index',
                             f"front={self.tmp / 'web.json'}")

    def test_every_endpoint_answers_in_the_cli_shapes(self):
        call = self.server.call
        status, found = call('/api/search?q=total+tax&top_k=5')
        self.assertEqual(status, 200)
        self.assertEqual(found['query'], 'total tax')
        cli_found = json.loads(cli('search', 'total tax', '--top-k', '5', '--json', '--index',
                                   self.tmp / 'api.json', '--index',
                                   f"front={self.tmp / 'web.json'}").stdout)
        self.assertEqual(found, cli_found)
        self.assertEqual(call('/api/search?q=total&repo=front')[1]['results'][0]['repo'], 'front')
        self.assertEqual(call('/api/search?q=total&lang=typescript')[1]['results'][0]['symbol'],
                         'cartTotal')
        self.assertEqual(call('/api/symbol?name=total_with_tax')[1]['results'][0]['repo'], 'api')
        at = call('/api/at?path=api:billing.py&line=3')[1]
        self.assertEqual(at['result']['symbol'], 'total_with_tax')
        outline = call('/api/outline')[1]
        self.assertEqual([(f['repo'], f['path']) for f in outline['files']],
                         [('api', 'billing.py'), ('front', 'cart.ts')])
        grep = call('/api/grep?pattern=rate&fixed=1')[1]
        self.assertEqual({m['repo'] for m in grep['matches']}, {'api', 'front'})
        read = call('/api/read?path=cart.ts&start=2&end=2')[1]
        self.assertEqual((read['repo'], read['text']), ('front', '  return 1 + rate;'))
        trace = ('Traceback (most recent call last):\n  File "/srv/api/billing.py", line 3, '
                 'in total_with_tax\nTypeError: x\n').encode()
        traced = call('/api/trace', data=trace)[1]
        self.assertEqual(traced['exceptions'][0]['frames'][0]['chunk']['symbol'],
                         'total_with_tax')
        repos = call('/api/repos')[1]['repos']
        self.assertEqual([(r['name'], r['state']) for r in repos],
                         [('api', 'fresh'), ('front', 'fresh')])
        health = call('/api/health')[1]
        self.assertEqual((health['status'], health['repos']), ('ok', ['api', 'front']))
        status, page = call('/')
        self.assertEqual(status, 200)
        self.assertIn(b'<title>code search</title>', page)
        self.assertRegex(self.server.stderr().decode(), r'"GET /api/health HTTP/1\.1" 200')

    def test_bad_requests(self):
        call = self.server.call
        cases = ['/api/search', '/api/search?q=', '/api/search?q=x&top_k=0',
                 '/api/search?q=x&top_k=abc', '/api/search?q=x&lang=cobol',
                 '/api/search?q=x&repo=nope', '/api/at?path=billing.py&line=-1',
                 '/api/grep?pattern=(', '/api/read?path=billing.py&start=5&end=2',
                 '/api/read?path=billing.py&start=99', '/api/search?q=tax&explain=maybe',
                 '/api/search?q=tax&q=total', '/api/grep?pattern=tax&fixed=2',
                 '/api/search?q=%20%09', '/api/symbol?name=%20',     # blank, as the CLI says
                 '/api/search?q=x&top_k=%EF%BC%91']                  # a full-width 1
        for path in cases:
            with self.subTest(path=path):
                status, document = call(path)
                self.assertEqual(status, 400, document)
                self.assertEqual(list(document), ['error'])
                self.assertNotIn('\n', document['error'])
        self.assertEqual(call('/api/nothing')[0], 404)
        for flag, explained in (('off', False), ('ON', True)):
            hit = call(f'/api/search?q=tax&explain={flag}')[1]['results'][0]
            self.assertEqual('explain' in hit, explained, flag)
        self.assertEqual(call('/api/search', data=b'x')[0], 405)
        self.assertEqual(call('/api/search?q=tax', method='POST')[0], 405)     # no body
        self.assertEqual(call('/', method='POST')[0], 405)
        self.assertEqual(call('/api/trace', method='POST', headers={'Content-Length': 'x'})[0],
                         400)
        self.assertEqual(call('/api/search?q=%ff%fe')[0], 400)
        import socket                     # a Content-Length of a non-ASCII digit ('\xb2')
        with socket.create_connection(('127.0.0.1', self.server.port)) as raw:
            raw.sendall(b'POST /api/trace HTTP/1.1\r\nHost: localhost\r\n'
                        b'Content-Length: \xb2\r\n\r\n')
            self.assertTrue(raw.makefile('rb').readline().startswith(b'HTTP/1.0 400'))
        for method in ('PUT', 'DELETE', 'PATCH', 'OPTIONS'):
            with self.subTest(method=method):
                self.assertEqual(call('/api/search?q=tax', method=method),
                                 (405, {'error': '/api/search takes GET'}))
        self.assertEqual(call('/api/search?q=tax', method='HEAD'), (200, b''))
        self.assertEqual(call('/api/search?q=' + 'x' * 5000)[0], 414)
        self.assertEqual(call('/api/trace', data=b'x' * (2 << 20))[0], 413)
        self.assertEqual(call('/api/trace', data=b'x' * (API_BODY_LIMIT + 12345))[0], 413)
        self.assertEqual(call('/api/health', headers={'Host': 'attacker.example'})[0], 403)
        with socket.create_connection(('127.0.0.1', self.server.port)) as raw:  # body unread
            raw.sendall(b'POST /api/trace HTTP/1.1\r\nHost: attacker.example\r\n\r\n')
            self.assertTrue(raw.makefile('rb').read().startswith(b'HTTP/1.0 403'))
        for host in ('LOCALHOST', '[::1]', f'[::1]:{self.server.port}', 'localhost:1'):
            self.assertEqual(call('/api/health', headers={'Host': host})[0], 200, host)
        here = f'127.0.0.1:{self.server.port}'
        for headers, status in (({'Sec-Fetch-Site': 'cross-site'}, 403),   # another page's
                                ({'Sec-Fetch-Site': 'same-site'}, 403),    # script: localhost:3000
                                ({'Origin': 'http://localhost:3000'}, 403),   # older browsers
                                ({'Origin': 'null'}, 403),
                                ({'Sec-Fetch-Site': 'same-origin', 'Origin': 'null'}, 200),
                                ({'Origin': f'http://{here}'}, 200),
                                ({'Sec-Fetch-Site': 'none'}, 200)):      # typed in the bar
            with self.subTest(headers=headers):
                self.assertEqual(call('/api/search?q=tax', headers=headers)[0], status)
        self.assertEqual(call('/', headers={'Sec-Fetch-Site': 'cross-site'})[0], 200)  # a link
        for request, answer in (
                (b'GET /api/health HTTP/1.1\r\nHost: localhost\r\nHost: evil.example', b'400'),
                (b'DELETE /api/search HTTP/1.1\r\nHost: localhost', b'Allow: GET, HEAD'),
                (b'GET /api/trace HTTP/1.1\r\nHost: localhost', b'Allow: POST')):
            with socket.create_connection(('127.0.0.1', self.server.port)) as raw:
                raw.sendall(request + b'\r\n\r\n')
                self.assertIn(answer, raw.makefile('rb').read().partition(b'\r\n\r\n')[0])
        with socket.create_connection(('127.0.0.1', self.server.port)) as raw:
            raw.sendall(b'POST /api/trace HTTP/1.1\r\nHost: localhost\r\n'
                        b'Content-Length: 1000\r\n\r\nTraceback (most recent call last):\n')
            raw.shutdown(socket.SHUT_WR)                # a body cut short: not a trace
            self.assertTrue(raw.makefile('rb').readline().startswith(b'HTTP/1.0 400'))
        for request, status in ((b'FOO /api/health HTTP/1.1', 405), (b'GET / HTTP/9.9', 505),
                                (b'GET /' + b'a' * 70000 + b' HTTP/1.1', 414),
                                (b'garbage', 400)):
            with socket.create_connection(('127.0.0.1', self.server.port)) as raw:
                raw.sendall(request + b'\r\nHost: localhost\r\n\r\n')
                reply = raw.makefile('rb').read()
            head, _, body = reply.partition(b'\r\n\r\n')
            self.assertTrue(head.startswith(b'HTTP/1.0 %d' % status), head[:40])
            self.assertIn(b'Content-Type: application/json', head)
            self.assertEqual(list(json.loads(body)), ['error'])     # the API's shape

    def test_nothing_outside_the_roots(self):
        secret = self.tmp / 'secret.txt'
        secret.write_text('SECRET-9f1')
        for path in ('../secret.txt', '%2e%2e/secret.txt', '%2E%2E%2Fsecret.txt',
                     str(secret), 'api:../secret.txt', '..%5csecret.txt', '/etc/passwd'):
            with self.subTest(path=path):
                status, document = self.server.call(f'/api/read?path={path}')
                self.assertEqual(status, 400)
                self.assertNotIn('SECRET-9f1', json.dumps(document))
        status, document = self.server.call('/api/grep?pattern=SECRET')
        self.assertEqual(document['matches'], [])

    def test_a_replaced_index_is_read_again_while_requests_go_on(self):
        errors, stop = [], threading.Event()

        def client():
            while not stop.is_set():
                status, document = self.server.call('/api/search?q=total')
                if status != 200:
                    errors.append((status, document))
        threads = [threading.Thread(target=client) for _ in range(4)]
        for thread in threads:
            thread.start()
        try:
            write(self.tmp / 'api' / 'refund.py', 'def refund_everything():\n    pass\n')
            self.assertEqual(cli('index', self.tmp / 'api', '--out', self.tmp / 'api.json')
                             .returncode, 0)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                found = self.server.call('/api/symbol?name=refund_everything')[1]['results']
                if found:
                    break
                time.sleep(0.1)
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
            (self.tmp / 'api' / 'refund.py').unlink()
            cli('index', self.tmp / 'api', '--out', self.tmp / 'api.json')
        self.assertEqual(errors, [])
        self.assertEqual(found[0]['path'], 'refund.py')

    def test_a_slow_client_does_not_block_others(self):
        import socket
        slow = socket.create_connection(('127.0.0.1', self.server.port))
        try:
            slow.sendall(b'GET /api/health HTTP/1.1\r\nHost: localhost\r\n')   # never ends
            started = time.monotonic()
            self.assertEqual(self.server.call('/api/health')[0], 200)
            self.assertLess(time.monotonic() - started, 5)
        finally:
            slow.close()


class ServeCommandTests(unittest.TestCase):
    def test_misuse_and_other_hosts(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        self.assertEqual(cli('serve', '--index', tmp / 'missing.json').returncode, 2)
        for port in ('99999', '５', '²', '0' * 20 + '80'):     # ASCII digits, as a URL's
            self.assertEqual(cli('serve', '--port', port).returncode, 2, port)
        make_repos(tmp)
        server = Server(self, '--index', tmp / 'api.json', '--host', '0.0.0.0')
        self.assertIn(b'warning: serving on 0.0.0.0', server.stderr())

    def test_a_client_that_resets_its_connection_is_one_line_not_a_traceback(self):
        import socket
        import struct
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        make_repos(tmp)
        write(tmp / 'notes' / 'a.md', '# A\n\nalpha\n')
        self.assertEqual(run_cli(NOTES_TOOL, 'index', tmp / 'notes', '--out', tmp / 'n.json')
                         .returncode, 0)
        for tool, index in ((CODE_TOOL, tmp / 'api.json'), (NOTES_TOOL, tmp / 'n.json')):
            server = Server(self, '--index', index, tool=tool)
            for _ in range(5):
                client = socket.create_connection(('127.0.0.1', server.port))
                client.sendall(b'GET / HTTP/1.0\r\nHost: local')    # its headers unfinished
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
                client.close()                                   # a reset, not a goodbye
            self.assertEqual(server.call('/api/health')[0], 200)
            self.assertNotIn(b'Traceback', server.stderr())
            self.assertIn(b'request not completed: ', server.stderr())

    @unittest.skipUnless(hasattr(signal, 'setitimer'), 'the time limit needs SIGALRM')
    def test_a_pattern_that_backtracks_for_ever_is_stopped_and_the_server_goes_on(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        write(tmp / 'root' / 'x.txt', 'a' * 40 + '!\n')
        self.assertEqual(cli('index', tmp / 'root', '--out', tmp / 'x.json').returncode, 0)
        write(tmp / 'quick.py', f'import sys\nsys.path.insert(0, {str(ROOT)!r})\n'
                                'import code_search\ncode_search.GREP_SECONDS = 1\n'
                                'sys.exit(code_search.main())\n')
        server = Server(self, '--index', tmp / 'x.json', tool=tmp / 'quick.py')
        started = time.monotonic()
        threads = [threading.Thread(target=lambda: stopped.append(server.call(
            '/api/grep?pattern=(a%2B)%2B%24'))), threading.Thread(target=lambda: time.sleep(
                0.3) or healthy.append(server.call('/api/health')))]
        stopped, healthy = [], []
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertLess(time.monotonic() - started, 20)
        self.assertEqual(stopped, [(400, {'error': 'the pattern took over 1 s on x.txt: it '
                                                   'backtracks too much; simplify it'})])
        self.assertEqual(healthy[0][0], 200)
        self.assertEqual(server.call('/api/grep?pattern=a%2B!')[1]['matches'][0]['line'], 1)


@unittest.skipUnless(CHROMIUM, 'chromium is not installed (apt-get install chromium)')
class BrowserTests(unittest.TestCase):
    """The page in headless Chromium: it searches, highlights, and shows code as text."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp()).resolve()
        make_repos(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def dom(self, server, query):
        return dump_dom(server.url('/?' + query))

    def test_english_korean_symbol_and_grep(self):
        server = Server(self, '--index', self.tmp / 'api.json', '--index', self.tmp / 'web.json')
        dom = self.dom(server, 'mode=search&q=total+with+tax')
        self.assertIn('<span class="where">api:billing.py:1-3</span>', dom)
        self.assertIn('<mark>total</mark>', dom)
        korean = self.dom(server, 'mode=search&q=%EC%84%B8%EA%B8%88+%ED%8F%AC%ED%95%A8')
        self.assertIn('<strong class="symbol">total_with_tax</strong>', korean)
        self.assertIn('<mark>세금</mark>', korean)
        symbol = self.dom(server, 'mode=symbol&q=cartTotal')
        self.assertIn('<span class="where">web:cart.ts:1-3</span>', symbol)
        grep = self.dom(server, 'mode=grep&q=rate&fixed=1&repo=web')
        self.assertIn('<strong class="symbol">cart.ts</strong>', grep)
        self.assertNotIn('billing.py', grep)
        cased = self.dom(server, 'mode=grep&q=Total&repo=api')      # marked as grep matches
        self.assertEqual(set(re.findall(r'<mark>(\w+)</mark>', cased)), {'Total'})
        folded = self.dom(server, 'mode=grep&q=%28%3Fi%29TOTAL&repo=api')
        self.assertEqual(set(re.findall(r'<mark>(\w+)</mark>', folded)), {'Total', 'total'})

    def test_code_is_shown_as_text(self):
        server = Server(self, '--index', self.tmp / 'api.json')
        dom = self.dom(server, 'mode=grep&q=script&fixed=1')
        self.assertIn('<title>code search</title>', dom)
        self.assertIn('&lt;<mark>script</mark>&gt;document.title', dom)
        self.assertNotIn(SCRIPT, dom)


if __name__ == '__main__':
    unittest.main()

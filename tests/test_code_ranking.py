"""code_search.py ranking on small real repositories: pasted messages find the code that
prints them, tests stay below the code they test, private implementations are found,
and --explain (CLI, MCP, HTTP API) adds up to each hit's score.  Standard library only."""
import json
import math
import unittest.mock

from tests.support import CODE_TOOL, TempDirCase, run_cli, write

import code_search

MESSAGE = 'could not parse the header line %r: expected a colon after %s'


def cli(*args, **kwargs):
    return run_cli(CODE_TOOL, *args, **kwargs)


def search_tree(root, question, top_k):
    """The explained hits of a question over the files under root, in memory."""
    chunks, _ = code_search.scan_tree(root)
    return code_search.search_index(code_search.make_search_index(chunks), question,
                                    top_k=top_k, explain=True)


def assert_demoted(case, hits, what, weight):
    """The second hit carries the factor `what` at weight, and ranks second because of it."""
    case.assertEqual(hits[1]['explain']['factors'][what], weight)
    case.assertGreater(hits[1]['score'] / weight, hits[0]['score'])


class RankingCase(TempDirCase):
    """A small HTTP package: a header parser that raises a message, a helper whose
    docstring says many of the same words, a private redirect loop, its test."""

    def setUp(self):
        super().setUp()
        self.root = self.tmp / 'web'
        write(self.root / 'web' / 'headers.py', (
            'def parse_header_line(line):\n'
            '    name, colon, value = line.partition(":")\n'
            '    if not colon:\n'
            f'        raise ValueError("{MESSAGE}" % (line, name))\n'
            '    return name.strip(), value.strip()\n'
            '\n\n'
            'def header_lines(text):\n'
            '    """Parse header lines: each header line has a name, a colon and a value;\n'
            '    the line could not be parsed when the header has no colon."""\n'
            '    return [line for line in text.splitlines() if line]\n'))
        write(self.root / 'web' / 'sessions.py', (
            'class Session:\n'
            '    def send(self, request):\n'
            '        """Send a request."""\n'
            '        return self._resolve_redirects(request)\n'
            '\n'
            '    def _resolve_redirects(self, response):\n'
            '        """Follow the redirects of a response until a final one."""\n'
            '        while response.is_redirect:\n'
            '            response = response.follow()\n'
            '        return response\n'))
        write(self.root / 'tests' / 'test_sessions.py', (
            'def test_redirects_are_followed():\n'
            '    """Redirects are followed until the final response."""\n'
            '    session = Session()\n'
            '    assert session.follow_redirects(response).status == 200  # follow redirects\n'))
        self.index = self.tmp / 'web.json'
        result = cli('index', self.root, '--out', self.index)
        self.assertEqual(result.returncode, 0, result.stderr)

    def search(self, question, *options):
        result = cli('search', question, '--index', self.index, '--top-k', '5', '--json',
                     *options)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)['results']


class RankingTests(RankingCase):
    def test_a_pasted_message_finds_the_code_that_raises_it(self):
        pasted = ("ValueError: could not parse the header line 'Host example.org': "
                  "expected a colon after Host example.org")
        hits = self.search(pasted, '--explain')
        self.assertEqual(hits[0]['symbol'], 'parse_header_line')
        self.assertIn('phrase', hits[0]['explain']['factors'])
        self.assertNotIn('phrase', hits[1]['explain']['factors'])
        self.assertEqual(code_search.phrase_words(pasted, f'"{MESSAGE}"'), 10)
        self.assertEqual(code_search.phrase_words('expected after a colon the header',
                                                  f'"{MESSAGE}"'), 2)
        self.assertEqual(code_search.phrase_words('colon expected after', f'"{MESSAGE}"'), 0)

    def test_a_pasted_message_finds_the_raiser_not_the_definition_of_its_type(self):
        root = self.tmp / 'mail'
        write(root / 'errors.py', (
            'class HeaderError(ValueError):\n'
            '    """A header line could not be parsed: it has no colon."""\n'))
        write(root / 'headers.py', (
            'def parse_header_line(line):\n'
            '    if ":" not in line:\n'
            f'        raise HeaderError("{MESSAGE}" % (line, line))\n'
            '    return line\n'))
        pasted = ("errors.HeaderError: could not parse the header line 'Host x': "
                  "expected a colon after Host x")
        hits = search_tree(root, pasted, 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['parse_header_line', 'HeaderError'])
        self.assertEqual(hits[1]['explain']['factors'].get('message type'),
                         code_search.MESSAGE_TYPE_WEIGHT)
        write(root / 'Failures.java', (
            'class MissingHeaderException extends Exception {\n'
            '    /** A header the request must have is missing. */\n'
            '    MissingHeaderException(String header) {\n'
            '        super("no " + header + " header in the request");\n'
            '    }\n'
            '}\n'
            'class BadHeaderException extends Exception {\n'
            '    /** A header line could not be parsed: a header without a colon. */\n'
            '    BadHeaderException(String line) { super(line); }\n'
            '}\n'))
        hits = search_tree(root, 'MissingHeaderException: no Host header in the request', 1)
        self.assertEqual((hits[0]['symbol'], hits[0]['explain']['factors']),
                         ('MissingHeaderException.MissingHeaderException',
                          {'phrase': code_search.PHRASE_WEIGHT}))  # its constructor says it
        hits = search_tree(root, "BadHeaderException: could not parse the header line 'Host x'",
                           9)
        self.assertEqual(sorted((hit['symbol'], hit['explain']['factors'].get('message type'))
                                for hit in hits if 'BadHeader' in hit['symbol']),
                         [('BadHeaderException.BadHeaderException',
                           code_search.MESSAGE_TYPE_WEIGHT)])
        self.assertEqual(hits[0]['symbol'], 'parse_header_line')
        self.assertEqual(code_search.message_type(pasted), 'errors.headererror')
        self.assertEqual(code_search.message_type('HeaderError: no colon'), 'headererror')
        self.assertEqual(code_search.message_type('HeaderError: colon'), '')     # too short
        self.assertEqual([code_search.raised_type(message) for message in (
            pasted, 'OSError: [Errno 2] No such file', 'error: the request failed',
            'INFO: server started on port 80', 'Session: how do I keep cookies')],
            ['headererror', 'oserror', '', '', ''])
        self.assertEqual(search_tree(root, 'HeaderError', 1)[0]['symbol'], 'HeaderError')

    def test_a_logged_or_coloured_message_finds_its_raiser_not_its_type(self):
        root = self.tmp / 'mail'
        write(root / 'errors.py', (
            'class HeaderError(ValueError):\n'
            '    """A header line could not be parsed: it has no colon."""\n'))
        write(root / 'headers.py', (
            'def _parse_header_line(line):\n'
            '    if ":" not in line:\n'
            f'        raise HeaderError("{MESSAGE}" % (line, line))\n'
            '    return line\n'
            '\n\n'
            'def parse_headers(text):\n'
            '    """Parse the header lines of a request: a header line holds a colon,\n'
            '    and the host header line could not be parsed without one."""\n'
            '    return [_parse_header_line(line) for line in text.splitlines()]\n'))
        message = "errors.HeaderError: could not parse the header line 'Host x': expected a " \
                  "colon after Host x"
        for pasted in (message, f'2026-12-06 15:04:26,318 ERROR [worker-2] {message}',
                       f'\x1b[31mERROR\x1b[0m {message}'):
            hits = search_tree(root, pasted, 3)
            self.assertEqual(hits[0]['symbol'], '_parse_header_line', pasted)
            self.assertNotIn('private name', hits[0]['explain']['factors'])  # it says it
            self.assertEqual(code_search.raised_type(code_search.TERMINAL_CODES.sub('', pasted)),
                             'headererror')
        self.assertNotIn('31m', search_tree(root, f'\x1b[31m{message}', 1)[0]['explain']
                         ['missing'] + search_tree(root, f'\x1b[31m{message}', 1)[0]
                         ['explain']['dropped'])
        self.assertIn('private name', search_tree(root, 'parse a header line', 3)[1]
                      ['explain']['factors'])         # a question in words: private still lower
        with unittest.mock.patch.object(code_search, 'PRIVATE_NAME_WEIGHT', 0.0):  # set to 0
            hits = search_tree(root, message, 3)
        self.assertEqual((hits[0]['symbol'], hits[-1]['symbol'], hits[-1]['score']),
                         ('parse_headers', '_parse_header_line', 0.0))

    def test_a_stray_backquote_makes_no_literal_of_code_outside_javascript_and_go(self):
        text = ('# a stray ` quote\n'
                'if could_not(open): the(frobnicator.device) is now failing\n'
                '# and ` another\n')
        question = 'ValueError: could not open the frobnicator device now'
        self.assertEqual(code_search.phrase_words(question, text, 'python'), 0)   # it is code
        self.assertEqual(code_search.phrase_words(question, text, 'javascript'), 4)  # a template
        template = 'throw new Error(`could not open\nthe frobnicator device now`);\n'
        self.assertEqual(code_search.phrase_words(question, template, 'javascript'), 7)
        self.assertEqual(code_search.phrase_words(question, template, 'kotlin'), 0)

    def test_a_pasted_message_finds_the_whole_of_a_short_literal(self):
        # 'negative PUT argument' has three words, fewer than PHRASE_MIN_WORDS: pasted,
        # all of them in a row still count; asked in words, or only in part, they do not.
        root = self.tmp / 'pickler'
        write(root / 'queue.py', (
            'class Queue:\n'
            '    def put(self, item):\n'
            '        """Put an item into the queue; a negative timeout is an argument\n'
            '        error, so put checks its argument first."""\n'
            '        self.items.append(item)\n'))
        write(root / 'unpickler.py', (
            'def load_put(stack, memo, index):\n'
            '    if index < 0:\n'
            '        raise ValueError("negative PUT argument")\n'
            '    memo[index] = stack[-1]\n'))
        hits = search_tree(root, 'ValueError: negative PUT argument', 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['load_put', 'Queue.put'])
        self.assertEqual(hits[0]['explain']['factors'], {'phrase': code_search.PHRASE_WEIGHT})
        literal = '"negative PUT argument"'
        self.assertEqual(code_search.phrase_words('ValueError: negative PUT argument', literal),
                         code_search.PHRASE_MIN_WORDS)
        self.assertEqual(code_search.phrase_words('error: bad escape x.txt', '"bad escape %s"'),
                         code_search.PHRASE_MIN_WORDS)
        self.assertEqual(code_search.phrase_words('is a negative PUT argument allowed', literal),
                         0)                                          # not pasted
        self.assertEqual(code_search.phrase_words('the 2 negative PUT argument', literal),
                         0)                                          # a number is no message
        self.assertLess(code_search.phrase_words('ValueError: negative argument PUT', literal),
                        code_search.PHRASE_MIN_WORDS)                # not in a row
        self.assertEqual(code_search.phrase_words('ValueError: negative PUT', literal), 0)

    def test_a_short_message_and_a_literal_ending_in_an_escape_count(self):
        # Three words pasted ('ReadError: empty file') may hold a whole short literal,
        # and '\\n' or '\\t' in a literal parts its words instead of being one ('n').
        root = self.tmp / 'archive'
        write(root / 'reader.py', (
            'def next_member(header):\n'
            '    """Read the next member of the archive from its header block."""\n'
            '    if not header:\n'
            '        raise ReadError("empty file")\n'
            '    return header\n'))
        write(root / 'members.py', (
            'def is_empty_file(member):\n'
            '    """Whether the member is an empty file: a file of no bytes."""\n'
            '    return member.size == 0\n'))
        write(root / 'report.py', (
            'def report(widget):\n'
            "    sys.stderr.write('Widget failure\\n\\tat %s\\n' % widget)\n"))
        hits = search_tree(root, 'ReadError: empty file', 1)
        self.assertEqual((hits[0]['symbol'], hits[0]['explain']['factors']),
                         ('next_member', {'phrase': code_search.PHRASE_WEIGHT}))
        hits = search_tree(root, 'worker 7: Widget failure at gadget-3', 1)
        self.assertEqual((hits[0]['symbol'], hits[0]['explain']['factors']),
                         ('report', {'phrase': code_search.PHRASE_WEIGHT}))
        self.assertEqual(code_search.phrase_words('Widget failure', r"'Widget failure\n'"), 0)

    def test_a_raiser_deep_among_the_candidates_is_read_for_its_literal(self):
        # Forty functions whose docstrings say some of the message's words outrank the
        # raiser by words alone; PHRASE_DEPTH reaches it, and its literal puts it first.
        root = self.tmp / 'deep'
        for number in range(40):
            write(root / f'mod{number}.py', (
                f'def header_{number}(line):\n'
                '    """Parse a header line, which has a colon."""\n'
                '    return line\n'))
        for number in range(200):
            write(root / f'other{number}.py', (
                f'def checksum_{number}(data):\n'
                '    """Compute the checksum of the data."""\n'
                '    return data\n'))
        write(root / 'raiser.py', (
            'def check(line):\n'
            f'    raise ValueError("{MESSAGE}" % (line, line))\n'))
        pasted = "could not parse the header line 'Host x': expected a colon after Host x"
        hit = search_tree(root, pasted, 1)[0]
        self.assertEqual((hit['symbol'], hit['explain']['factors']),
                         ('check', {'phrase': code_search.phrase_weight(pasted, 10)}))

    def test_the_literal_that_says_most_of_a_pasted_message_goes_first(self):
        # Both literals hold 4 words or more of the message in a row; the one holding 7
        # outweighs a docstring that says a little more of the message's words.
        root = self.tmp / 'uploads'
        write(root / 'report.py', (
            'def log_failure(path):\n'
            '    """Report that an upload of a file failed."""\n'
            '    log("upload of the file failed")\n'))
        write(root / 'upload.py', (
            'def send(path, tries):\n'
            '    raise UploadError("upload of the file %s failed after %d retries" % (path, tries))\n'))
        pasted = 'UploadError: upload of the file report.pdf failed after 3 retries'
        hits = search_tree(root, pasted, 2)
        self.assertEqual([(hit['symbol'], hit['explain']['factors']['phrase']) for hit in hits],
                         [('send', code_search.phrase_weight(pasted, 7)),
                          ('log_failure', code_search.PHRASE_WEIGHT)])
        self.assertGreater(hits[1]['explain']['words_score'], hits[0]['explain']['words_score'])
        self.assertEqual(code_search.phrase_weight(pasted, 9), 1.5 * code_search.PHRASE_WEIGHT)
        self.assertEqual(code_search.phrase_weight('how the upload of the file failed', 9),
                         code_search.PHRASE_WEIGHT)         # in words, a docstring says it

    def test_a_message_holding_a_whole_literal_fills_its_placeholders_with_anything(self):
        # A placeholder (Kotlin's $status too) stands for a long repr, or for part of a
        # word ('test%s', '%.3fs'); a short literal with a placeholder counts even in a
        # message without marks.
        root = self.tmp / 'runner'
        write(root / 'runner.py', (
            'def summarize(tests, taken):\n'
            '    """Print how many tests ran and how long they took."""\n'
            '    print("Ran %d test%s in %.3fs" % (len(tests), "s" * (len(tests) != 1), taken))\n'
            '\n'
            'def slow(handle, seconds):\n'
            '    """Warn of a slow callback."""\n'
            '    log.warning("Executing %s took %.3f seconds", handle, seconds)\n'
            '\n'
            'def refuse(code, message):\n'
            '    log.error("code %d, message %s", code, message)\n'))
        write(root / 'timing.py', (
            'def report_seconds(tests, seconds):\n'
            '    """Report how many seconds the tests took, or a code and its message."""\n'
            '    return seconds\n'))
        write(root / 'Call.kt', (
            'class Call {\n'
            '    /** Check that a response succeeded. */\n'
            '    fun check(status: Int) {\n'
            '        if (status >= 400) throw IOException("Unexpected code $status")\n'
            '    }\n'
            '}\n'))
        for question, symbol in (
                ('java.io.IOException: Unexpected code 500', 'Call.check'),
                ('Ran 42 tests in 0.318s', 'summarize'),
                ("Executing <Task pending name='Task-1' coro=<main() running at app.py:10>> "
                 'took 0.250 seconds', 'slow'),
                ('code 404, message File not found', 'refuse')):
            hit = search_tree(root, question, 1)[0]
            self.assertEqual((hit['symbol'], hit['explain']['factors']),
                             (symbol, {'phrase': code_search.PHRASE_WEIGHT}), question)
        words = code_search.phrase_words
        self.assertEqual(words('Ran 1 test in 0.001s', '"Ran %d test%s in %.3fs"'), 4)
        self.assertEqual(words('error: Ran 42 tests', '"Ran %d test%s in %.3fs"'), 0)
        self.assertEqual(words('errors: ran 42 tests in 0.3s', '"ran %d tests"'),
                         code_search.PHRASE_MIN_WORDS)
        self.assertEqual(words('errors: overran 42 tests', '"ran %d tests"'), 0)
        self.assertEqual(words('errors: ran 42 testsuites', '"ran %d tests"'), 0)
        self.assertEqual(words('error: file not found', "f'file' ' not found'"),
                         code_search.PHRASE_MIN_WORDS)          # joined literals, prefixed
        self.assertEqual(words('how do I sleep in five seconds', '"in %s seconds"'), 0)
        self.assertEqual(words('how do I sleep in 5 seconds', '"in %s seconds"'),
                         code_search.PHRASE_MIN_WORDS)          # a number: it looks pasted
        self.assertEqual(words("OSError: can't connect", r"'can\'t connect'"),
                         code_search.PHRASE_MIN_WORDS)          # an escaped quote is itself
        self.assertEqual(words('Hata: İstanbul bağlantısı koptu', '"İstanbul bağlantısı koptu"'),
                         code_search.PHRASE_MIN_WORDS)
        self.assertEqual(words('Executing ' + 'x' * (code_search.PLACEHOLDER_CHARS + 1) +
                               ' took 1.5 seconds', '"Executing %s took %.3f seconds"'), 0)

    def test_test_files_of_every_language_are_known_by_their_paths(self):
        tests = ['tests/test_sessions.py', 'web/test_app.py', 'net/http/serve_test.go',
                 'src/test/java/StoreTest.java', 'app/Shelf.spec.ts', 'lib/__tests__/a.js',
                 'std/src/fs/tests.rs', 'core/benches/iter.rs', 'alloc/tests/vec.rs',
                 'okhttp/src/jvmTest/kotlin/okhttp3/FakeRoutePlanner.kt',
                 'app/src/androidTest/java/Helper.java', 'spec/operators/map-spec.ts',
                 'lib/parser_spec.mjs', 'spec/helpers/setup.js', 'conftest.py']
        code = ['web/sessions.py', 'net/http/server.go', 'src/main/java/Store.java',
                'std/src/fs.rs', 'core/src/iter/mod.rs', 'attest/contest.py',
                'okhttp/src/jvmMain/kotlin/okhttp3/RoutePlanner.kt', 'src/LoadTest/a.kt',
                'src/internal/spec.ts', 'lib/inspect.js', 'src/ApiSpec.ts', 'spec/schema.py',
                'src/jinja2/tests.py', 'src/werkzeug/test.py']   # Jinja's tests, a test client
        self.assertEqual([path for path in tests if not code_search.TEST_PATH.search(path)], [])
        self.assertEqual([path for path in code if code_search.TEST_PATH.search(path)], [])

    def test_tests_rank_below_a_private_implementation(self):
        hits = self.search('where are redirects followed')
        self.assertEqual(hits[0]['symbol'], 'Session._resolve_redirects')
        self.assertEqual(hits[1]['path'], 'tests/test_sessions.py')
        asked = self.search('test that redirects are followed')
        self.assertEqual(asked[0]['symbol'], 'test_redirects_are_followed')


class PrivateTests(TempDirCase):
    def write_mutex(self):
        """A Go package with an exported method, its unexported helper and an unexported
        type's method."""
        root = self.tmp / 'gosync'
        write(root / 'mutex.go', (
            'package sync\n'
            '\n'
            'type Mutex struct{ state int32 }\n'
            '\n'
            '// Lock locks the mutex.\n'
            'func (m *Mutex) Lock() { m.lockSlow() }\n'
            '\n'
            '// lockSlow locks the mutex the slow way, when the mutex is held.\n'
            'func (m *Mutex) lockSlow() { m.state = 1 }\n'
            '\n'
            '// mutexProfile records the mutex.\n'
            'type mutexProfile struct{}\n'
            '\n'
            'func (p mutexProfile) Lock() {}\n'))
        return root

    def test_a_lowercase_go_name_is_private_and_ranks_below_the_exported_one(self):
        root = self.write_mutex()
        hits = search_tree(root, 'lock the mutex', 3)
        self.assertEqual(hits[0]['symbol'], 'Mutex.Lock')
        private = {hit['symbol'] for hit in hits
                   if hit['explain']['factors'].get('private name') ==
                   code_search.PRIVATE_NAME_WEIGHT}
        self.assertEqual(private, {'Mutex.lockSlow', 'mutexProfile.Lock'})

    def test_a_member_of_a_private_type_is_private_but_one_of_a_private_constructor_not(self):
        root = self.tmp / 'resolve'
        write(root / 'Resolver.java', (
            'public class Resolver {\n'
            '    /** Resolves a host name to its address. */\n'
            '    public static String resolve(String host) { return Lookup.find(host); }\n'
            '    private static final class Lookup {\n'
            '        /** Finds the address of a host name. */\n'
            '        static String find(String host) { return host; }\n'
            '    }\n'
            '}\n'))
        write(root / 'WebAddress.kt', (
            '/** A parsed web address of a host. */\n'
            'class WebAddress private constructor(val text: String) {\n'
            '  /** Resolves a host name against this address. */\n'
            '  fun resolve(name: String): String = text + name\n'
            '}\n'))
        hits = search_tree(root, 'resolve a host name address', 10)
        self.assertEqual({hit['symbol'] for hit in hits},
                         {'Resolver.resolve', 'Resolver.Lookup.find', 'WebAddress.resolve'})
        private = {hit['symbol'] for hit in hits if 'private name' in hit['explain']['factors']}
        self.assertEqual(private, {'Resolver.Lookup.find'})

    def test_a_question_about_insides_does_not_lower_private_code(self):
        root = self.write_mutex()
        for question in ('how does the mutex lock the slow way when it is held',
                         'how is the mutex locked the slow way, internally',
                         '뮤텍스를 내부에서 잠그는 방법'):
            with self.subTest(question=question):
                hits = search_tree(root, question, 3)
                self.assertFalse(any('private name' in hit['explain']['factors']
                                     for hit in hits))
        hits = search_tree(root, 'how does the mutex lock the slow way when it is held', 1)
        self.assertEqual(hits[0]['symbol'], 'Mutex.lockSlow')
        hits = search_tree(root, 'how do I lock the mutex', 3)      # asks for the API
        self.assertEqual(hits[0]['symbol'], 'Mutex.Lock')
        self.assertIn('private name', hits[1]['explain']['factors'])

    def test_code_in_an_internal_folder_ranks_below_the_public_package(self):
        root = self.tmp / 'goroot'
        write(root / 'internal' / 'bytealg' / 'bytealg.go', (
            'package bytealg\n'
            '\n'
            '// Index returns the index of the first instance of a substring in a string.\n'
            'func Index(a, b string) int { return 0 }\n'))
        write(root / 'strings' / 'strings.go', (
            'package strings\n'
            '\n'
            '// Index returns the first instance of substr in s.\n'
            'func Index(s, substr string) int { return 0 }\n'))
        hits = search_tree(root, 'index of the first instance of a substring in a string', 3)
        self.assertEqual([hit['path'] for hit in hits[:2]],
                         ['strings/strings.go', 'internal/bytealg/bytealg.go'])
        assert_demoted(self, hits, 'internal path', code_search.PRIVATE_NAME_WEIGHT)
        self.assertNotIn('internal path', hits[0]['explain']['factors'])
        hits = search_tree(root, 'how is the first instance of a substring found internally', 3)
        self.assertFalse(any({'internal path', 'private name'} & set(hit['explain']['factors'])
                             for hit in hits))
        self.assertFalse(code_search.INTERNAL_PATH.search('internal/notes.py'))  # Go's
        self.assertTrue(code_search.INTERNAL_PATH.search('java.base/sun/nio/ch/Net.java'))
        self.assertTrue(code_search.INTERNAL_PATH.search('std/src/sys/unix/fs.rs'))
        self.assertFalse(code_search.INTERNAL_PATH.search('src/internal/Subject.ts'))

    def test_a_member_declared_private_ranks_below_a_public_one(self):
        root = self.tmp / 'store'
        write(root / 'Store.java', (
            'public class Store {\n'
            '    /** Grow the table of entries when it is full. */\n'
            '    @SuppressWarnings("unchecked")\n'
            '    private static void growTable(int size) { }\n'
            '\n'
            '    /** Grow the table. */\n'
            '    public void grow() { growTable(2); }\n'
            '\n'
            '    /** Grow the privateKey table. */\n'
            '    public int privateKey() { return 1; }\n'
            '}\n'))
        write(root / 'store.ts', (
            'export class Cache {\n'
            '  /** Grow the table of entries when it is full. */\n'
            '  private growTable(size: number): void {}\n'
            '  /** Grow the table of entries when it is full. */\n'
            '  #growSecret(size: number): void {}\n'
            '}\n'))
        write(root / 'Store.kt', (
            'class Shelf {\n'
            '    /** Grow the table of entries when it is full. */\n'
            '    private fun growShelf(size: Int) = size\n'
            '    /** Grow the table of entries when it is full. */\n'
            '    internal fun growModule(size: Int) = size\n'
            '    /** Grow the table of entries when it is full. */\n'
            '    fun growPublic(size: Int) = size\n'
            '}\n'
            'internal class Rack {\n'
            '    /** Grow the table of entries when it is full. */\n'
            '    fun growRack(size: Int) = size\n'
            '}\n'))
        out = self.tmp / 'index.json'
        cli('index', str(root), '--out', str(out))
        result = cli('search', 'grow the table when it is full', '--index', str(out),
                     '--top-k', '10', '--json', '--explain')
        hits = {hit['symbol']: hit for hit in json.loads(result.stdout)['results']}
        private = {symbol for symbol, hit in hits.items()
                   if 'private name' in hit['explain']['factors']}
        self.assertEqual(private, {'Store.growTable', 'Cache.growTable', 'Cache.#growSecret',
                                   'Shelf.growShelf', 'Shelf.growModule',
                                   'Rack.growRack'})   # Kotlin's internal: its module's only
        self.assertIn('Shelf.growPublic', hits)
        self.assertIn('Store.privateKey', hits)     # a name holding 'private' is not private


    def test_java_package_access_is_private_but_an_interface_member_is_public(self):
        root = self.tmp / 'pool'
        write(root / 'Pool.java', (
            'public class Pool {\n'
            '    /** Grows the pool of workers. */\n'
            '    public void grow() { }\n'
            '    /** Grows the pool of workers by one. */\n'
            '    protected void growOne() { }\n'
            '    /** Grows the pool of workers now. */\n'
            '    void growNow() { }\n'
            '}\n'
            '\n'
            'class Workers {\n'
            '    /** Grows the pool of workers. */\n'
            '    public void grow() { }\n'
            '}\n'
            '\n'
            'public interface Growing {\n'
            '    /** Grows the pool of workers. */\n'
            '    void grow();\n'
            '}\n'
            '\n'
            'public @interface Grows {\n'
            '    /** Grows the pool of workers. */\n'
            '    int grow();\n'
            '}\n'))
        hits = search_tree(root, 'grow the pool of workers', 10)
        methods = {hit['symbol']: hit['explain']['factors'] for hit in hits
                   if hit['symbol'].endswith(('.grow', '.growOne', '.growNow'))}
        self.assertEqual(len(methods), 6)
        self.assertEqual({symbol for symbol, factors in methods.items()
                          if 'private name' in factors}, {'Pool.growNow', 'Workers.grow'})


class ProseFileTests(TempDirCase):
    def write_project(self):
        """Django's shape: a page of the manual holds every word of the question, and
        the private method that does it holds a few."""
        root = self.tmp / 'site'
        write(root / 'docs/ref/fields.txt', (
            'Choices\n=======\n\nFor each field that has choices set, the object has a\n'
            'method that returns the human-readable label of the field instead of the\n'
            'value stored in the database: get_FOO_display.\n\n' + ''.join(
                f'Option {number} sets how the admin orders, filters and searches rows.\n'
                for number in range(50))))
        write(root / 'models/base.py', (
            'class Model:\n'
            '    def _get_FIELD_display(self, field):\n'
            '        value = getattr(self, field.attname)\n'
            '        return dict(field.flatchoices).get(value, value)\n'))
        write(root / 'autoreload.py', (
            'def trigger_reload(filename):\n'
            '    logger.info("%s changed, reloading.", filename)\n'))
        for number in range(30):
            write(root / f'views{number}.py', (
                f'def view_{number}(request):\n'
                '    """Render the home page: the blog index, or the site map."""\n'
                '    return render(request, "home/blog/mysite.html")\n'))
        return root

    def test_prose_ranks_below_the_code_unless_the_question_asks_for_it(self):
        root = self.write_project()
        question = 'show the human-readable label of a choices field instead of the stored value'
        hits = search_tree(root, question, 2)
        self.assertEqual([hit['symbol'] for hit in hits],
                         ['Model._get_FIELD_display', 'docs/ref/fields.txt:L1-57'])
        assert_demoted(self, hits, 'prose file', code_search.PROSE_FILE_WEIGHT)
        asked = search_tree(root, 'where is the documentation of ' + question, 2)
        self.assertEqual(asked[0]['path'], 'docs/ref/fields.txt')
        self.assertNotIn('prose file', asked[0]['explain']['factors'])

    def test_code_in_a_language_read_in_windows_is_not_prose(self):
        root = self.tmp / 'ext'
        write(root / 'speedups.c', 'static int scan_once(const char *text) {\n'
                                   '    return decode_string(text);\n}\n')
        write(root / 'notes.txt', 'scan once: decode a string\n')
        hits = search_tree(root, 'scan once decode string', 2)
        self.assertEqual([(hit['path'], hit['explain']['factors']) for hit in hits],
                         [('speedups.c', {}), ('notes.txt', {'prose file': 0.5})])
        self.assertEqual(code_search.language_of('src/ext/speedups.c'), 'c')

    def test_a_log_line_holding_a_path_is_pasted(self):
        root = self.write_project()
        pasted = '/home/dev/mysite/blog/views.py changed, reloading.'
        hit = search_tree(root, pasted, 1)[0]
        self.assertEqual((hit['symbol'], hit['explain']['factors']),
                         ('trigger_reload', {'phrase': code_search.PHRASE_WEIGHT}))
        for words in ('read/write a file', 'and/or', 'TCP/IP', 'tidy a/./b/../c to a/c'):
            self.assertFalse(code_search.MESSAGE_MARKS.search(words))


class ModuleCodeTests(TempDirCase):
    def test_a_definition_ranks_above_the_module_docstring_that_sums_it_up(self):
        root = self.tmp / 'colours'
        write(root / 'colors.py', (
            '"""Colour conversions: convert an RGB colour to hue, saturation and value."""\n'
            'import math\n'
            '\n'
            'ONE_THIRD = 1.0 / 3.0\n'
            'print("loaded", math.pi)\n'
            '\n\n'
            'def rgb_to_hsv(r, g, b):\n'
            '    """Convert r, g, b to hue, saturation and value."""\n'
            '    return max(r, g, b), min(r, g, b), 0.0\n'))
        hits = search_tree(root, 'convert an rgb colour to hue saturation and value', 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['rgb_to_hsv', '<module>'])
        assert_demoted(self, hits, 'module code', code_search.MODULE_CODE_WEIGHT)


class MethodTests(TempDirCase):
    def test_a_python_function_ranks_above_a_method_saying_the_same(self):
        root = self.tmp / 'trees'
        write(root / 'trees.py', (
            'class Tree:\n'
            '    def copy_files(self, folder):\n'
            '        """Copy the whole tree of files into another folder."""\n'
            '        return folder\n'
            '\n\n'
            'def copy_tree(source, folder):\n'
            '    """Copy a whole tree of files into another folder."""\n'
            '    return folder\n'))
        write(root / 'trees.go', (
            'package trees\n'
            '\n'
            '// Copy copies the whole tree of files into another folder.\n'
            'func (t *Tree) Copy(folder string) {}\n'))
        hits = search_tree(root, 'copy the whole tree of files into another folder', 3)
        self.assertEqual([hit['symbol'] for hit in hits[:2]], ['copy_tree', 'Tree.copy_files'])
        assert_demoted(self, hits, 'method', code_search.METHOD_WEIGHT)
        self.assertEqual(hits[2]['symbol'], 'Tree.Copy')
        self.assertNotIn('method', hits[2]['explain']['factors'])          # Python only
        pasted = search_tree(root, 'copy_files: "the whole tree of files into another folder"', 1)
        self.assertEqual(pasted[0]['symbol'], 'Tree.copy_files')           # not a question
        self.assertNotIn('method', pasted[0]['explain']['factors'])


class TypeTests(TempDirCase):
    def test_a_question_in_words_wants_the_method_above_its_type(self):
        root = self.tmp / 'gosync'
        write(root / 'waitgroup.go', (
            'package sync\n'
            '\n'
            '// A WaitGroup waits for a group of goroutines to finish.\n'
            'type WaitGroup struct{ n int }\n'
            '\n'
            '// Wait blocks until the goroutines of the group finish.\n'
            'func (wg *WaitGroup) Wait() {}\n'))
        hits = search_tree(root, 'wait for a group of goroutines to finish', 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['WaitGroup.Wait', 'WaitGroup'])
        assert_demoted(self, hits, 'type', code_search.TYPE_WEIGHT)
        named = search_tree(root, 'WaitGroup', 1)[0]
        self.assertEqual(named['symbol'], 'WaitGroup')
        self.assertNotIn('type', named['explain']['factors'])

    def test_a_constructor_named_after_its_type_counts_as_the_type(self):
        root = self.tmp / 'jio'
        write(root / 'LineReader.java', (
            'public class LineReader {\n'
            '    /** Creates a line reader that fills its character buffer from a stream. */\n'
            '    public LineReader(Reader in) { }\n'
            '\n'
            '    /** Fills the buffer of characters again from the stream. */\n'
            '    public void fill() { }\n'
            '}\n'))
        hits = search_tree(root, 'how does the line reader fill its character buffer', 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['LineReader.fill', 'LineReader.LineReader'])
        assert_demoted(self, hits, 'type', code_search.TYPE_WEIGHT)

    def test_a_type_named_in_a_sentence_is_where_to_look_not_the_answer(self):
        root = self.tmp / 'jutil'
        write(root / 'ArrayList.java', (
            'public class ArrayList {\n'
            '    /** Constructs an empty list of elements with room for ten. */\n'
            '    public ArrayList() { }\n'
            '\n'
            '    /** Increases the capacity so the list holds at least the given elements. */\n'
            '    private void grow(int minCapacity) { }\n'
            '}\n'))
        asked = 'ArrayList에 요소를 추가하다가 공간이 모자라면 내부 배열 크기를 키우는 부분'
        hits = search_tree(root, asked, 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['ArrayList.grow', 'ArrayList.ArrayList'])
        self.assertNotIn('exact name', hits[1]['explain']['factors'])
        for named in ('ArrayList', 'new ArrayList', "ArrayList's constructor",
                      'new ArrayList<Map<String, Integer>>(16)'):   # the name, or little more
            hit = search_tree(root, named, 1)[0]
            self.assertEqual((hit['symbol'], hit['explain']['factors'].get('exact name')),
                             ('ArrayList.ArrayList', code_search.EXACT_NAME_WEIGHT))

    def test_a_word_and_its_number_is_a_word_of_the_sentence_not_a_name(self):
        root = self.tmp / 'gosrc'
        write(root / 'json' / 'decode.go', (
            'package json\n\n'
            '// A Number represents a JSON number literal.\n'
            'type Number string\n\n'
            '// Float64 returns the number as a float64.\n'
            'func (n Number) Float64() (float64, error) {\n'
            '\treturn strconv.ParseFloat(string(n), 64)\n}\n'))
        write(root / 'strconv' / 'atof.go', (
            'package strconv\n\n'
            '// ParseFloat parses the string s into a float64 number.\n'
            'func ParseFloat(s string, bitSize int) (float64, error) {\n'
            '\treturn atof64(s)\n}\n'))
        hits = search_tree(root, 'parse a string into a float64', 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['ParseFloat', 'Number.Float64'])
        self.assertNotIn('exact name', hits[1]['explain']['factors'])
        self.assertEqual(code_search.named_in_question('b64encode a float64'), {'b64encode'})
        self.assertEqual(search_tree(root, 'Float64', 1)[0]['symbol'], 'Number.Float64')


class OverloadTests(TempDirCase):
    def test_a_typescript_function_is_found_by_its_body_not_its_overload_signatures(self):
        root = self.tmp / 'lib'
        write(root / 'src' / 'startWith.ts', (
            'export function startWith<T>(value: null): T;\n'
            'export function startWith<T>(value: undefined): T;\n'
            '/** Emits the given values first, then the values of the source. */\n'
            'export function startWith<T>(...values: T[]): T {\n'
            '  return values[0];\n'
            '}\n'
            '/** Emits the given values last, after the source completes. */\n'
            'export function endWith<T>(value: T): T;\n'
            'export function endWith<T>(...values: T[]): T {\n'
            '  return values[0];\n'
            '}\n'
            'export interface Source {\n'
            '  /** Emits the given values to every subscriber. */\n'
            '  emit(values: number[]): void;\n'
            '}\n'))
        write(root / 'Parser.java', (
            'class Parser {\n'
            '    /** Parses the given values from a string. */\n'
            '    static int parse(String s) { return parse(s, 10); }\n'
            '    /** Parses the given values from a string in a radix. */\n'
            '    static int parse(String s, int radix) { return 0; }\n'
            '}\n'))
        hits = search_tree(root, 'given values', 10)
        self.assertEqual(sorted((hit['symbol'], hit['start']) for hit in hits), [
            ('Parser.parse', 3), ('Parser.parse', 5),       # Java overloads: two bodies
            ('Source.emit', 14), ('endWith', 9), ('startWith', 4)])
        self.assertEqual(search_tree(root, 'startWith', 1)[0]['start'], 4)
        last = search_tree(root, 'emits values last after the source completes', 1)[0]
        self.assertEqual((last['symbol'], last['start']), ('endWith', 9))   # the signature's doc
        index = code_search.make_search_index(code_search.scan_tree(root)[0])
        self.assertEqual(sorted(hit['start'] for hit in code_search.find_symbol(index, 'startWith')),
                         [1, 2, 4])             # symbol finds the signatures too

    def test_a_second_overload_ranks_below_another_answer(self):
        root = self.tmp / 'jfmt'
        write(root / 'Printer.java', (
            'class Printer {\n'
            '    /** Prints a string with placeholders filled in to the stream. */\n'
            '    void printf(String format, Object... args) { }\n'
            '    /** Prints a string with placeholders filled in to the stream, in a locale. */\n'
            '    void printf(Locale l, String format, Object... args) { }\n'
            '}\n'))
        write(root / 'Text.java', (
            'class Text {\n'
            '    /** Returns a string with its placeholders filled in. */\n'
            '    static String fill(String pattern, Object... args) { return pattern; }\n'
            '}\n'))
        hits = search_tree(root, 'print a string with placeholders', 3)
        self.assertEqual([(hit['symbol'], hit['start']) for hit in hits], [
            ('Printer.printf', 3), ('Text.fill', 3), ('Printer.printf', 5)])
        assert_demoted(self, hits[1:], 'repeated name', code_search.REPEATED_NAME_WEIGHT)
        self.assertNotIn('repeated name', hits[0]['explain']['factors'])


class PathWordTests(TempDirCase):
    def test_a_file_whose_path_holds_a_question_word_ranks_higher(self):
        root = self.tmp / 'formats'
        write(root / 'json' / 'codec.py', (
            'def load(fp):\n'
            '    """Load a document from an open file."""\n'
            '    return fp.read()\n'))
        write(root / 'misc' / 'helpers.py', (
            'def load_document(fp):\n'
            '    """Load a JSON document, or any document, from an open file."""\n'
            '    return fp.read()\n'))
        hits = search_tree(root, 'load a json document from an open file', 2)
        self.assertEqual([hit['path'] for hit in hits], ['json/codec.py', 'misc/helpers.py'])
        weight = hits[0]['explain']['factors']['path word']
        self.assertEqual(weight, code_search.PATH_WORD_WEIGHT)
        self.assertNotIn('path word', hits[1]['explain']['factors'])
        self.assertLess(hits[0]['score'] / weight, hits[1]['score'])      # it decided


    def test_a_synonym_names_a_path_but_a_layout_word_or_a_test_file_does_not(self):
        root = self.tmp / 'app'
        body = 'def {}(path):\n    """Read the settings at path and split the text."""\n'
        write(root / 'src' / 'config' / 'loader.py', body.format('read_settings'))
        write(root / 'lib' / 'reader.py', body.format('read_settings_file'))
        write(root / 'tests' / 'test_settings.py', body.format('test_read_settings'))
        hits = {hit['path']: hit['explain']['factors'] for hit in
                search_tree(root, 'read the settings from the source library', 3)}
        self.assertEqual(hits['src/config/loader.py'].get('path word'),
                         code_search.PATH_WORD_WEIGHT)        # settings -> config
        self.assertNotIn('path word', hits['lib/reader.py'])  # source -> src, library -> lib
        self.assertEqual(hits['tests/test_settings.py'], {'test file': code_search.TEST_FILE_WEIGHT})

    def test_a_compound_name_reached_through_a_part_does_not_name_a_path(self):
        root = self.tmp / 'tools'
        for n in range(6):              # 'make' and 'dir' used on their own: parts
            write(root / 'entries' / f'e{n}.py', f'def make_dir_entry_{n}(dir):\n    return dir\n')
        write(root / 'tools' / 'makedirs.py', (
            'def makedirs(path):\n'
            '    """Create a folder tree with its parents."""\n'
            '    return path\n'))
        hit = search_tree(root, 'create a dir tree', 1)[0]
        self.assertEqual((hit['path'], hit['symbol']), ('tools/makedirs.py', 'makedirs'))
        reached = {word['term']: word['concept'] for word in hit['explain']['words']}
        self.assertEqual(reached.get('makedir'), 'dir')       # through the part 'dir'
        self.assertNotIn('path word', hit['explain']['factors'])

    def test_an_apostrophe_in_a_word_is_not_a_pasted_quote(self):
        self.assertFalse(code_search.PASTED.search("wait for a group's goroutines, don't spin"))
        self.assertTrue(code_search.PASTED.search("Error: No such command 'stauts'."))
        self.assertTrue(code_search.PASTED.search("a 'quoted' word"))


class ConceptTests(TempDirCase):
    def test_a_term_two_korean_words_share_counts_for_the_one_with_fewer_meanings(self):
        # 뮤텍스 means lock or mutex, 잠금 only lock: lock is 잠금's, so a hit with both
        # words counts both instead of the better of them.
        root = self.tmp / 'sync'
        write(root / 'sync.py', (
            'class Mutex:\n'
            '    """A mutual exclusion lock."""\n'
            '\n'
            '    def lock(self):\n'
            '        """Lock the mutex, waiting until it is free."""\n'
            '        return True\n'))
        hit = search_tree(root, '뮤텍스로 잠금 걸기', 1)[0]
        self.assertEqual(hit['symbol'], 'Mutex.lock')
        counted = {word['term']: word['concept'] for word in hit['explain']['words']
                   if word['counted']}
        self.assertEqual((counted['lock'], counted['mutex']), ('잠금', '뮤텍스'))

    def test_an_apostrophe_s_or_t_is_no_word_to_look_for(self):
        root = self.tmp / 'accounts'
        write(root / 'accounts.py', (
            'def display_name(user):\n'
            '    """The name shown for a user."""\n'
            '    return user.name\n'
            '\n'
            '\n'
            'def swap(s, t):\n'
            '    """Return t and s the other way round."""\n'
            '    return t, s\n'))
        hits = search_tree(root, "what's the user's name? it isn't shown", 5)
        self.assertEqual([hit['symbol'] for hit in hits], ['display_name'])
        self.assertNotIn('s', [word['term'] for word in hits[0]['explain']['words']])

    def test_a_korean_check_is_not_a_request_for_tests(self):
        root = self.tmp / 'zips'
        write(root / 'zips.py', (
            'def is_zip(path):\n'
            '    """Check whether the file at path is a zip file."""\n'
            '    return path.endswith(".zip")\n'))
        write(root / 'tests' / 'test_zips.py', (
            'def test_is_zip_checks_a_zip_file():\n'
            '    """Check that a zip file is checked as a zip file: check, check."""\n'
            '    assert is_zip("a.zip")\n'))
        hits = search_tree(root, 'zip 파일인지 검사하기', 2)
        self.assertEqual(hits[0]['symbol'], 'is_zip')
        self.assertEqual(hits[1]['explain']['factors'].get('test file'),
                         code_search.TEST_FILE_WEIGHT)
        asked = search_tree(root, 'zip 파일 검사 테스트', 1)[0]          # 테스트 asks for tests
        self.assertNotIn('test file', asked['explain']['factors'])

    def test_a_question_about_tests_wants_test_code_not_the_data_beside_it(self):
        root = self.tmp / 'codec'
        write(root / 'codec.py', 'def decode(text):\n    return text\n')
        write(root / 'tests' / 'test_codec.py', (
            'def test_decode_round_trip():\n'
            '    """Decoding what was encoded gives it back."""\n'
            '    assert decode("a") == "a"\n'))
        cases = ',\n'.join(f'  {{"test": "decode round trip {n}", "decode": "x{n}"}}'
                            for n in range(20))
        write(root / 'tests' / 'data' / 'decode_cases.json', f'[\n{cases}\n]\n')
        hits = search_tree(root, 'test that decode round trip works', 3)
        self.assertEqual(hits[0]['symbol'], 'test_decode_round_trip')
        self.assertNotIn('test file', hits[0]['explain']['factors'])
        data = [hit for hit in hits if hit['path'].endswith('.json')]
        self.assertTrue(data)
        self.assertEqual(data[0]['explain']['factors'].get('test file'),
                         code_search.TEST_FILE_WEIGHT)

    def test_a_rust_test_module_ranks_below_the_code_it_tests(self):
        root = self.tmp / 'headers'
        write(root / 'src' / 'lib.rs', (
            '/// Splits a header line into its name and value.\n'
            'pub fn split_header(line: &str) -> (&str, &str) {\n'
            '    line.split_once(": ").unwrap_or((line, ""))\n'
            '}\n'
            '\n'
            '#[cfg(test)]\n'
            'mod tests {\n'
            '    use super::*;\n'
            '\n'
            '    /// A header line splits into its name and value.\n'
            '    #[test]\n'
            '    fn split_header_line_into_name_and_value() {\n'
            '        assert_eq!(split_header("a: b"), ("a", "b"));\n'
            '    }\n'
            '}\n'))
        hits = search_tree(root, 'split a header line into its name and value', 2)
        self.assertEqual([hit['symbol'] for hit in hits],
                         ['split_header', 'tests.split_header_line_into_name_and_value'])
        assert_demoted(self, hits, 'test module', code_search.TEST_FILE_WEIGHT)
        asked = search_tree(root, 'test that splits a header line into name and value', 1)
        self.assertEqual(asked[0]['symbol'], 'tests.split_header_line_into_name_and_value')
        self.assertNotIn('test module', asked[0]['explain']['factors'])

    def test_a_meaning_or_synonym_does_not_bring_its_one_letter_or_digit_parts(self):
        # 국제화 means i18n, not i, 18 and n: a function whose only match is its n is no hit.
        root = self.tmp / 'stats'
        write(root / 'stats.py', (
            'def average(values):\n'
            '    """Return the mean of the values."""\n'
            '    n = len(values)\n'
            '    return sum(values) / n\n'))
        self.assertEqual(search_tree(root, '국제화', 1), [])
        write(root / 'i18n.py', 'def load_i18n_catalog(name):\n    return name\n')
        hits = search_tree(root, '국제화', 2)
        self.assertEqual([hit['symbol'] for hit in hits], ['load_i18n_catalog'])

    def test_words_of_tools_and_systems_are_in_the_glossary(self):
        # 프로젝트, 브랜치, 활성화 and 편집 had no meaning: they were found nowhere.
        root = self.tmp / 'tool'
        write(root / 'vcs.py', 'def switch_branch(name):\n    return name\n')
        write(root / 'plugins.py', 'def enable_plugin(name):\n    return name\n')
        write(root / 'editor.py', 'def edit_project(path):\n    return path\n')
        for question, symbol in (('브랜치 전환', 'switch_branch'),
                                 ('플러그인 활성화', 'enable_plugin'),
                                 ('프로젝트 편집', 'edit_project')):
            self.assertEqual(search_tree(root, question, 1)[0]['symbol'], symbol)

    def test_an_entry_is_no_tree_and_a_buffer_grows(self):
        # 엔트리 was read as a compound holding 트리 (tree), and 키우 (grow), 청소
        # (clean up) and 모자라 (lack) had no meaning.
        root = self.tmp / 'table'
        write(root / 'table.py', (
            'class Table:\n'
            '    def expunge_stale_entries(self):\n'
            '        """Drop the entries whose keys were collected."""\n'
            '\n'
            '    def grow(self, needed):\n'
            '        """Enlarge the buffer when its capacity is insufficient."""\n'))
        write(root / 'tree.py', 'def walk_tree(tree):\n    """Visit a tree."""\n')
        for question, symbol in (('사라진 엔트리를 청소하기', 'Table.expunge_stale_entries'),
                                 ('버퍼 용량이 모자라면 키우기', 'Table.grow')):
            hits = search_tree(root, question, 3)
            self.assertEqual([hit['symbol'] for hit in hits], [symbol], question)
        for word, meaning in (('레지스트리', 'registry'), ('트리거', 'trigger'),  # not tree,
                              ('포인트', 'point'), ('에이전트', 'agent'),      # int, prev,
                              ('프로그래밍', 'programming'), ('스위치', 'switch'),  # log,
                              ('종속성', 'dependency')):          # position, attribute
            self.assertEqual(code_search.korean_meanings(word)[0], meaning)
        self.assertNotIn('cancel', code_search.korean_meanings('정해지는'))  # 해지 in it

    def test_a_pool_is_not_unpacked(self):
        # 풀 alone is a pool (스레드 풀); 풀기 and 풀다 unpack (압축 풀기).  풀 meant unpack
        # only, and 종료 had no shutdown: 스레드 풀 종료 found no pool at all.
        root = self.tmp / 'pool'
        write(root / 'pool.py', (
            'class ThreadPool:\n'
            '    """Worker threads that run submitted tasks."""\n'
            '\n'
            '    def shutdown(self, wait=True):\n'
            '        """Stop accepting tasks; with wait, join the workers."""\n'
            '        return wait\n'))
        write(root / 'archive.py', (
            'def extract_archive(path, target):\n'
            '    """Extract a compressed archive into target."""\n'
            '    return path, target\n'
            '\n'
            'def exit_worker(thread):\n'
            '    """Exit one worker thread."""\n'
            '    return thread\n'))
        for question, symbol in (('스레드 풀 종료하기', 'ThreadPool.shutdown'),
                                 ('압축 풀기', 'extract_archive'),
                                 ('압축을 풀다', 'extract_archive')):
            self.assertEqual(search_tree(root, question, 1)[0]['symbol'], symbol, question)


class CompoundTests(TempDirCase):
    """Lowercase compound names (scandir) are reached through their parts (scan, dir)."""

    def make_tree(self):
        root = self.tmp / 'walker'
        for name in ('copy', 'move', 'sync', 'scan', 'clean'):
            write(root / f'{name}.py', (
                f'def {name}_dir(dir):\n'
                f'    """{name.title()} one dir; scan its entries."""\n'
                f'    return dir\n'))
        write(root / 'fast.py', 'def scandir(p):\n    "Yield the entries."\n    return p\n')
        return root

    def test_a_question_word_reaches_a_compound_name_that_holds_it(self):
        root = self.make_tree()
        out = self.tmp / 'index.json'
        self.assertEqual(cli('index', str(root), '--out', str(out)).returncode, 0)
        table = json.loads(out.read_text())['compounds']
        self.assertEqual((table['dir'], table['scan']), ('scandir', 'scandir'))
        result = cli('search', 'scan dir entries', '--index', str(out), '--top-k', '10',
                      '--json', '--explain')
        hits = json.loads(result.stdout)['results']
        hit = next(hit for hit in hits if hit['symbol'] == 'scandir')
        words = hit['explain']['words']
        self.assertEqual({(w['term'], w['part'], w['weight']) for w in words if w['part']},
                         {('scandir', 'scan', code_search.COMPOUND_WEIGHT)})
        self.assertTrue(all(w['counted'] for w in words))
        korean = cli('search', '디렉터리 스캔', '--index', str(out), '--top-k', '10', '--json')
        self.assertNotIn('scandir', [hit['symbol'] for hit in json.loads(korean.stdout)['results']])

    def test_the_table_follows_the_files_as_they_change(self):
        root = self.make_tree()
        out = self.tmp / 'index.json'
        cli('index', str(root), '--out', str(out))
        (root / 'fast.py').unlink()
        cli('index', str(root), '--out', str(out))
        self.assertNotIn('dir', json.loads(out.read_text())['compounds'])
        write(root / 'more.py', 'def dirscan(p):\n    return p\n')
        cli('index', str(root), '--out', str(out))
        self.assertEqual(json.loads(out.read_text())['compounds']['dir'], 'dirscan')

    def test_an_update_counts_again_only_the_postings_it_changed(self):
        root = self.make_tree()
        for number in range(30):
            write(root / f'more{number}.py', f'def listdir{number}(path):\n    return path\n')
        options = code_search.IndexOptions(jobs=1)
        index, _ = code_search.update_index(root, None, options)
        write(root / 'fast.py', 'def scandir(p):\n    "Yield the entries."\n    return p + 1\n')
        decoded = []
        unpack = code_search.unpack_postings
        with unittest.mock.patch.object(code_search, 'unpack_postings',
                                        lambda buckets: decoded.extend(buckets) or unpack(buckets)):
            index, stats = code_search.update_index(root, index, options)
        self.assertEqual(stats['updated'], 1)
        self.assertLess(len(decoded), code_search.POSTING_BUCKETS // 4)
        fresh, _ = code_search.update_index(root, None, options)
        self.assertEqual((index['compounds'], index['compound_words']),
                         (fresh['compounds'], fresh['compound_words']))
        self.assertEqual(index['compounds']['dir'], 'scandir')

    def test_a_hyphenated_question_word_finds_the_name_that_joins_it(self):
        root = self.tmp / 'perms'
        write(root / 'fs.py', ''.join(
            f'def read_{what}(path):\n    """Read the {what} of a file."""\n\n\n'
            for what in ('link', 'lines', 'bytes', 'text', 'header', 'size', 'owner')) + (
            'def set_readonly(path, flag):\n    """Change the permissions of a path."""\n\n\n'
            'def set_nonblocking(path):\n    """Change how a socket waits."""\n\n\n'
            'def is_time_out(value):\n    """Whether the wait ran past its limit."""\n'))
        self.assertEqual(search_tree(root, 'make a file read-only', 1)[0]['symbol'],
                         'set_readonly')
        for question in ('make a file non-blocking', 'make a file Non-Blocking'):
            self.assertEqual(search_tree(root, question, 1)[0]['symbol'],
                             'set_nonblocking', question)   # nonblocking is indexed stemmed
        self.assertEqual(search_tree(root, 'has the wait timed out past the time-out', 1)[0]
                         ['symbol'], 'is_time_out')
        self.assertNotEqual(search_tree(root, 'make a file read only', 1)[0]['symbol'],
                            'set_readonly')

    def test_an_adverb_in_the_question_finds_its_adjective_in_a_name(self):
        root = self.tmp / 'files'
        write(root / 'files.py', ''.join(
            f'def open_{what}_file(path):\n    """Open the {what} file at path."""\n\n\n'
            for what in ('log', 'data', 'config', 'temp', 'cache')) + (
            'def lazy_file(path):\n    """A handle that opens path on first use."""\n\n\n'
            'def comp(a, b):\n    """Order two values."""\n\n\n'
            'def real_path(path):\n    """The path without links."""\n\n\n'
            'def atomic_rename(source, target):\n    """Rename source over target."""\n'))
        for question, symbol in (('open a file lazily', 'lazy_file'),
                                 ('atomically rename a file', 'atomic_rename')):
            self.assertEqual(search_tree(root, question, 1)[0]['symbol'], symbol, question)
        words = search_tree(root, 'open a file lazily', 1)[0]['explain']['words']
        self.assertIn(('lazy', 'lazily'), {(word['term'], word['concept']) for word in words})
        self.assertEqual(search_tree(root, 'does it comply', 3), [])   # no adverb: no anchor
        self.assertNotIn(code_search.word_terms('multiple')[0],   # a verb in -ly is no adverb
                         code_search.query_terms('multiply two numbers').weights)
        self.assertNotIn('real_path', [hit['symbol'] for hit in  # 'really' is a stop word
                                       search_tree(root, 'really open the log file', 3)])

    def test_a_changed_limit_mines_the_table_again_without_a_changed_file(self):
        root = self.make_tree()
        index, _ = code_search.update_index(root, None, code_search.IndexOptions(jobs=1))
        self.assertIn('dir', index['compounds'])
        with unittest.mock.patch.object(code_search, 'COMPOUND_MIN_USES', 100):
            index, stats = code_search.update_index(root, index,
                                                    code_search.IndexOptions(jobs=1))
            self.assertEqual((index['compounds'], stats['changed']), ({}, True))
            _, stats = code_search.update_index(root, index,
                                                    code_search.IndexOptions(jobs=1))
            self.assertFalse(stats['changed'])

    def test_a_compound_must_be_used_less_than_its_parts(self):
        postings = {'get': ';'.join(['1 0 0'] * 9), 'siz': ';'.join(['1 0 0'] * 6),
                    'getsiz': '1 0 0', 'target': ';'.join(['1 0 0'] * 8),
                    'tar': ';'.join(['1 0 0'] * 5), 'isdir': '2 0 0',
                    'dir': ';'.join(['1 0 0'] * 5), 'do': '1 0 0'}
        words = {'names': {}, 'parts': {}}
        code_search.count_words(words, postings)
        self.assertEqual(code_search.mine_compounds(words),
                         {'dir': 'isdir', 'get': 'getsiz', 'siz': 'getsiz'})


class ExplainTests(RankingCase):
    def assert_adds_up(self, hit):
        explained = hit['explain']
        counted = [word for word in explained['words'] if word['counted']]
        self.assertTrue(counted)
        self.assertAlmostEqual(sum(word['score'] for word in counted),
                               explained['words_score'], places=3)
        self.assertAlmostEqual(explained['words_score'] * math.prod(
            explained['factors'].values()), hit['score'], places=3)
        self.assertAlmostEqual(explained['score'], hit['score'], places=3)
        for word in counted:
            self.assertAlmostEqual(sum(word['fields'].values()), word['score'], places=3)
            self.assertTrue(set(word['fields']) <= set(code_search.FIELDS))

    def test_json_explains_every_hit_and_adds_up(self):
        plain = self.search('where are redirects followed')
        hits = self.search('where are redirects followed', '--explain')
        self.assertEqual([hit['score'] for hit in hits], [hit['score'] for hit in plain])
        self.assertNotIn('explain', plain[0])
        for hit in hits:
            self.assert_adds_up(hit)
        test_hit = next(hit for hit in hits if hit['path'].startswith('tests/'))
        self.assertEqual(test_hit['explain']['factors'],
                         {'test file': code_search.TEST_FILE_WEIGHT})
        words = {word['term']: word for word in hits[0]['explain']['words']}
        self.assertIn('redirect', words)
        self.assertIn('name', words['redirect']['fields'])
        exact = self.search('parse_header_line', '--explain')[0]
        self.assertEqual(exact['explain']['factors']['exact name'],
                         code_search.EXACT_NAME_WEIGHT)
        korean = self.search('리다이렉트 따라가기', '--explain')[0]
        self.assert_adds_up(korean)
        self.assertIn(('redirect', '리디렉트'), {(word['term'], word['concept'])   # its term:
                                             for word in korean['explain']['words']})  # spelled

    def test_the_summary_is_the_first_sentence_and_e_g_ends_none(self):
        write(self.tmp / 'csv' / 'rows.py', (
            'def split_record(line):\n'
            '    """Split a record at its separators (e.g. commas) into fields.\n'
            '    Quoted separators stay."""\n'
            '    return line.split(",")\n'))
        for question, in_summary in (('commas', True), ('quoted', False)):
            fields = search_tree(self.tmp / 'csv', question, 1)[0]['explain']['words'][0]['fields']
            self.assertEqual('summary' in fields, in_summary, question)
            self.assertIn('doc', fields)

    def test_text_output_shows_the_sum_then_the_code(self):
        result = cli('search', 'where are redirects followed', '--index', self.index,
                     '--explain')
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertRegex(lines[0], r'^\[code-\d+\] web/sessions.py:6-10 Session._resolve_redirects$')
        explained = self.search('where are redirects followed', '--explain')[0]['explain']
        self.assertEqual(lines[1], '  score %.4f = %.4f (words) x %g (private name) x %g (method)'
                         % (explained['score'], explained['words_score'],
                            code_search.PRIVATE_NAME_WEIGHT, code_search.METHOD_WEIGHT))
        self.assertRegex(lines[2], r'^    redirect\s+\d+\.\d{4}  idf \d+\.\d\d  weight 1  name ')
        self.assertIn('    def _resolve_redirects(self, response):', lines)
        plain = cli('search', 'where are redirects followed', '--index', self.index)
        self.assertEqual(plain.stdout.splitlines()[1], '    def _resolve_redirects(self, response):')

    def test_it_names_the_words_a_hit_lacks_and_those_left_out(self):
        question = 'how do I follow the redirects of a parquet'
        explained = self.search(question, '--explain')[0]['explain']
        self.assertEqual((explained['missing'], explained['dropped']),
                         (['parquet'], ['how', 'do', 'I', 'the', 'of', 'a']))
        lacking = self.search('follow redirects of Files in read-only mode', '--explain')[0]
        self.assertEqual(lacking['explain']['missing'], ['Files', 'read', 'mode', 'read-only'])
        joined = self.search('how-to follow redirects of jsonParquet parquet Parquet',
                             '--explain')[0]['explain']
        self.assertEqual((joined['missing'], joined['dropped']),  # howto was searched, and
                         (['jsonParquet', 'parquet', 'how-to'], ['of']))  # each word once
        self.assertIn('redirect', {word['concept'] for word in explained['words']})
        lines = cli('search', question, '--index', self.index, '--explain').stdout.splitlines()
        self.assertIn('    not in this hit: parquet', lines)
        self.assertIn('    left out of the question: how do I the of a', lines)
        alone = self.search('which', '--explain')
        self.assertEqual([hit['explain']['dropped'] for hit in alone], [[]] * len(alone))

    def test_mcp_and_the_http_api_take_explain(self):
        repos = code_search.open_repos([str(self.index)])
        text, structured = code_search.mcp_call(
            repos, 'search_code', {'query': 'where are redirects followed', 'explain': True})
        self.assertIn('(words)', text)
        self.assert_adds_up(structured['results'][0])
        _, plain = code_search.mcp_call(repos, 'search_code',
                                        {'query': 'where are redirects followed'})
        self.assertNotIn('explain', plain['results'][0])
        status, kind, body = code_search.api_answer(
            lambda label=None: repos, 'GET', '/api/search?q=redirects+followed&explain=1', b'')
        self.assertEqual(status, 200)
        self.assert_adds_up(json.loads(body)['results'][0])
        status, kind, body = code_search.api_answer(
            lambda label=None: repos, 'GET', '/api/search?q=redirects+followed', b'')
        self.assertNotIn('explain', json.loads(body)['results'][0])

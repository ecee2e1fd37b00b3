"""code_search.py on JavaScript, TypeScript, Java, Kotlin, Go and Rust, and on the text
files it cuts in windows: definitions and line ranges against what the tree-sitter
reference printed for the fixtures (tests/fixtures/polyglot/*.oracle.jsonl, made once
with ../shared/tools/ts_chunks.py), line provenance, CRLF and BOM, and a fuzz of cuts
and splices.  Standard library only."""
import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import unittest
from unittest import mock

from tests.support import CODE_TOOL, ENV, ROOT, TempDirCase, run_cli, write

import code_search

FIXTURES = ROOT / 'tests' / 'fixtures' / 'polyglot'
ORACLES = sorted(FIXTURES.glob('*.oracle.jsonl'))


def cli(*args, **kwargs):
    return run_cli(CODE_TOOL, *args, **kwargs)


def oracle_of(path):
    """{(symbol, start, end)} the reference printed for a fixture (start with its
    annotations, decorators and attributes, as code_search counts it)."""
    records = [json.loads(line) for line in path.read_text(encoding='utf-8').splitlines()]
    return {(r['symbol'], r['start_decorated'], r['end']) for r in records}


def definitions_of(data, relative, accessors=False):
    """{(symbol, start, end)} of the chunks code_search makes of a file, but its module
    and window chunks, and Kotlin's getters and setters unless accessors: the reference
    lists none (tree-sitter-kotlin's tags have no property accessors)."""
    read = code_search.chunk_file(data, relative, hashlib.sha256(data).hexdigest())
    kotlin = code_search.language_of(relative) == 'kotlin'
    return {(c['symbol'], c['start'], c['end']) for c in read.chunks
            if c['symbol'] != '<module>' and c['kind'] != 'window' and
            (accessors or not kotlin or c['kind'] not in ('getter', 'setter'))}


def file_lines(data):
    """A file's lines as compilers number them: split on \\n only, \\r before it dropped."""
    text = data.decode('utf-8', 'replace')
    if text.startswith('\ufeff'):
        text = text[1:]
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    return [line[:-1] if line.endswith('\r') else line for line in lines]


class OracleTests(TempDirCase):
    """Every fixture's definitions are the reference's: same names, starts and ends."""

    def test_fixtures_exist_for_every_language(self):
        languages = {code_search.language_of(p.name[:-len('.oracle.jsonl')]) for p in ORACLES}
        self.assertEqual(languages, {'java', 'kotlin', 'go', 'rust', 'javascript',
                                     'typescript'})

    def test_each_fixture_matches_the_reference(self):
        for oracle in ORACLES:
            source = FIXTURES / oracle.name[:-len('.oracle.jsonl')]
            with self.subTest(source.name):
                self.assertEqual(definitions_of(source.read_bytes(), source.name),
                                 oracle_of(oracle))

    def test_outline_lists_them_from_the_index(self):
        shutil.copytree(FIXTURES, self.tmp / 'repo')
        out = self.tmp / 'index.json'
        self.assertEqual(cli('index', self.tmp / 'repo', '--out', out).returncode, 0)
        result = cli('outline', '--index', out, '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        files = {f['path']: f for f in json.loads(result.stdout)['files']}
        for oracle in ORACLES:
            name = oracle.name[:-len('.oracle.jsonl')]
            with self.subTest(name):
                listed = files[name]
                self.assertEqual(listed['language'], code_search.language_of(name))
                found = {(c['symbol'], c['start'], c['end']) for c in listed['chunks']
                         if c['symbol'] != '<module>' and not (listed['language'] == 'kotlin'
                                                             and c['kind'] in ('getter', 'setter'))}
                self.assertEqual(found, oracle_of(oracle))
                starts = [c['start'] for c in listed['chunks']]
                self.assertEqual(starts, sorted(starts))

    def test_names_receivers_and_traits(self):
        shutil.copytree(FIXTURES, self.tmp / 'repo')
        out = self.tmp / 'index.json'
        cli('index', self.tmp / 'repo', '--out', out)

        def symbol(name):
            result = cli('symbol', name, '--index', out, '--json')
            self.assertEqual(result.returncode, 0, result.stderr)
            return json.loads(result.stdout)['results']

        push = [h for h in symbol('List.Push') if h['path'] == 'traps.go']
        self.assertEqual((push[0]['start'], push[0]['end'], push[0]['receiver']),
                         (16, 22, '*List[T]'))
        fmt = [h for h in symbol('Point.fmt') if h['path'] == 'traps.rs'][0]
        self.assertEqual((fmt['language'], fmt['trait']), ('rust', 'fmt::Display'))
        impl = [h for h in symbol('Point') if h['path'] == 'traps.rs' and h['kind'] == 'impl']
        self.assertEqual(impl[0]['trait'], 'fmt::Display')
        shout = [h for h in symbol('shout') if h['path'] == 'traps.kt'][0]
        self.assertEqual((shout['symbol'], shout['receiver']), ('shout', 'String'))
        self.assertEqual(symbol('Traps.Point.Point')[0]['kind'], 'constructor')
        self.assertIn('traps.js', {h['path'] for h in symbol('Widget.constructor')})
        self.assertEqual([(h['path'], h['symbol']) for h in symbol('Widget.prototype.size')],
                         [(h['path'], h['symbol']) for h in symbol('Widget.size')])
        self.assertTrue(symbol('Widget.size'))
        self.assertEqual({h['symbol'] for h in symbol('Foo.legacy')}, {'Foo.legacy'})
        self.assertEqual(symbol('api.nested.deep')[0]['start'], 51)
        spelled = {'(*List[T]).Push': ('traps.go', 'List.Push', 'exact'),   # as each prints it
                   'Point::fmt': ('traps.rs', 'Point.fmt', 'exact'),
                   'Traps#spawn': ('Traps.java', 'Traps.spawn', 'exact'),
                   'traps.Traps.spawn': ('Traps.java', 'Traps.spawn', 'qualified'),
                   'Point<T>::fmt': ('traps.rs', 'Point.fmt', 'exact')}   # as a backtrace has
        for name, (path, found, match) in spelled.items():
            with self.subTest(name=name):
                self.assertIn((path, found, match),
                              {(h['path'], h['symbol'], h['match']) for h in symbol(name)})

    def test_a_go_method_named_with_its_package_is_not_the_package_function(self):
        write(self.tmp / 'repo' / 'net' / 'http' / 'server.go',
              'package http\n\ntype Server struct{}\n\nfunc (srv *Server) Serve() {}\n\n'
              'func Serve() {}\n')
        out = self.tmp / 'index.json'
        cli('index', self.tmp / 'repo', '--out', out)
        for name, found in (('net/http.(*Server).Serve', ['Server.Serve']),
                            ('net/http.Serve', ['Serve']), ('http.Serve', ['Serve'])):
            with self.subTest(name=name):
                hits = json.loads(cli('symbol', name, '--index', out, '--json').stdout)
                self.assertEqual([h['symbol'] for h in hits['results']], found)

    def test_a_name_a_package_re_exports_is_found_where_it_is_defined(self):
        write(self.tmp / 'repo' / 'aio' / '__init__.py', 'from .tasks import *\n')
        write(self.tmp / 'repo' / 'aio' / 'tasks.py', 'def gather(*tasks):\n    return tasks\n')
        write(self.tmp / 'repo' / 'aio' / 'queues.py',
              'class Queue:\n    def get(self):\n        return 1\n')
        write(self.tmp / 'repo' / 'queue.py',
              'class Queue:\n    def get(self):\n        return 2\n')
        write(self.tmp / 'repo' / 'alloc' / 'src' / 'vec' / 'mod.rs',
              'pub struct Vec<T> { len: usize }\n\nimpl<T> Vec<T> {\n'
              '    pub fn push(&mut self, value: T) {\n        self.len += 1;\n    }\n}\n')
        write(self.tmp / 'repo' / 'alloc' / 'src' / 'slice.rs',
              'impl<T> [T] {\n    pub fn sort(&mut self) {\n    }\n}\n')
        out = self.tmp / 'index.json'
        cli('index', self.tmp / 'repo', '--out', out)
        for name, found in (('aio.gather', [('aio/tasks.py', 'gather', 're-exported')]),
                            ('aio.Queue.get', [('aio/queues.py', 'Queue.get', 're-exported')]),
                            ('std::vec::Vec::push',                 # std re-exports alloc's
                             [('alloc/src/vec/mod.rs', 'Vec.push', 're-exported')]),
                            ('[T]::sort', [('alloc/src/slice.rs', '[T].sort', 'exact')]),
                            ('nowhere.gather', []), ('aio.nothing', [])):
            with self.subTest(name=name):
                hits = json.loads(cli('symbol', name, '--index', out, '--json').stdout)
                self.assertEqual([(h['path'], h['symbol'], h['match'])
                                  for h in hits['results']], found)

    def test_a_type_with_methods_is_found_but_not_searched(self):
        shutil.copytree(FIXTURES, self.tmp / 'repo')
        out = self.tmp / 'index.json'
        cli('index', self.tmp / 'repo', '--out', out)
        found = json.loads(cli('symbol', 'Repo', '--index', out, '--json').stdout)['results']
        self.assertIn(('traps.kt', 19, 35), {(h['path'], h['start'], h['end']) for h in found})
        hits = json.loads(cli('search', 'repo items constructor companion', '--index', out,
                              '--json', '--top-k', '50').stdout)['results']
        self.assertNotIn(('traps.kt', 'Repo'), {(h['path'], h['symbol']) for h in hits})


class LinesTests(TempDirCase):
    """Lines are counted on \\n only, and every chunk's text is its file's lines."""

    def assert_provenance(self, data, relative):
        read = code_search.chunk_file(data, relative, hashlib.sha256(data).hexdigest())
        lines = file_lines(data)
        self.assertTrue(read.chunks)
        for chunk in read.chunks:
            self.assertTrue(1 <= chunk['start'] <= chunk['end'] <= max(len(lines), 1), chunk)
            self.assertEqual(chunk['text'], '\n'.join(lines[chunk['start'] - 1:chunk['end']]),
                             (relative, chunk['symbol']))
        return read

    def test_every_chunk_of_every_fixture_is_its_lines(self):
        for path in sorted(FIXTURES.iterdir()):
            if not path.name.endswith('.jsonl'):
                with self.subTest(path.name):
                    self.assert_provenance(path.read_bytes(), path.name)

    def test_crlf_and_bom_give_the_same_ranges(self):
        for oracle in ORACLES:
            source = FIXTURES / oracle.name[:-len('.oracle.jsonl')]
            data = source.read_bytes()
            for variant in (data.replace(b'\n', b'\r\n'), b'\xef\xbb\xbf' + data,
                            b'\xef\xbb\xbf' + data.replace(b'\n', b'\r\n')):
                with self.subTest(source.name, variant=variant[:4]):
                    self.assertEqual(definitions_of(variant, source.name), oracle_of(oracle))
                    self.assert_provenance(variant, source.name)

    def test_form_feed_lone_cr_and_line_separator_do_not_end_lines(self):
        data = ('package p\n\nvar s = "a\u2028b"\n\x0c\n// one\rtwo\n'
                'func F() int {\n\treturn 1\n}\n').encode('utf-8')
        read = self.assert_provenance(data, 'p.go')
        self.assertIn(('F', 6, 8), {(c['symbol'], c['start'], c['end']) for c in read.chunks})

    def test_start_is_the_first_annotation_line_not_the_doc_comment(self):
        defined = definitions_of((FIXTURES / 'traps.rs').read_bytes(), 'traps.rs')
        self.assertIn(('Point', 5, 9), defined)        # /// doc on 4, #[derive] on 5
        self.assertIn(('inner.it_works', 42, 46), defined)
        java = definitions_of((FIXTURES / 'Traps.java').read_bytes(), 'Traps.java')
        self.assertIn(('Traps.generic', 14, 17), java)

    def test_doc_comments_fill_the_doc_field(self):
        data = (FIXTURES / 'traps.go').read_bytes()
        chunks = code_search.chunk_file(data, 'traps.go', 'x' * 64).chunks
        push = next(c for c in chunks if c['symbol'] == 'List.Push')
        self.assertEqual(push['doc'], 'Push adds v at the front.')
        data = (FIXTURES / 'traps.kt').read_bytes()
        shout = next(c for c in code_search.chunk_file(data, 'traps.kt', 'x' * 64).chunks
                     if c['symbol'] == 'shout')
        self.assertEqual(shout['doc'], 'Shouts.')

    def test_doc_markup_is_not_doc_words(self):
        source = textwrap.dedent('''\
            public class Files {
                /**
                 * Returns {@code true} if <i>path</i> exists&nbsp;now; see {@link #size},
                 * <a href="spec.html">the spec</a>.
                 * @param path the path
                 * @since 1.7
                 * @author Josh Bloch
                 */
                public static boolean exists(String path) { return true; }
            }
            ''').encode()
        chunks = code_search.chunk_file(source, 'Files.java', 'x' * 64).chunks
        doc = next(c for c in chunks if c['symbol'] == 'Files.exists')['doc']
        self.assertEqual(code_search.tokens(doc), {
            'returns', 'true', 'if', 'path', 'exists', 'now', 'see', 'size', 'spec'})
        source = b'/// Adds one.\n///\n/// ```\n/// let x = frobnicate(1);\n/// ```\nfn add_one() {}\n'
        chunks = code_search.chunk_file(source, 'lib.rs', 'x' * 64).chunks
        self.assertEqual(next(c for c in chunks if c['symbol'] == 'add_one')['doc'], 'Adds one.')

    def test_an_es5_class_as_typescript_emits_it_is_a_class_with_methods(self):
        source = textwrap.dedent('''\
            var Subscriber = /** @class */ (function (_super) {
                __extends(Subscriber, _super);
                function Subscriber(destination) {
                    return _super.call(this) || this;
                }
                Subscriber.create = function (next) {
                    return new Subscriber(next);
                };
                Subscriber.prototype.next = function (value) {
                    this._next(value);
                };
                return Subscriber;
            }(Subscription));
            function memo() { memo.cache = function () {}; }
            ''').encode()
        chunks = code_search.chunk_file(source, 'Subscriber.js', 'x' * 64).chunks
        self.assertEqual(sorted((c['symbol'], c['kind'], c['start'], c['end']) for c in chunks), [
            ('Subscriber', 'class', 1, 13), ('Subscriber.constructor', 'constructor', 3, 5),
            ('Subscriber.create', 'method', 6, 8), ('Subscriber.next', 'method', 9, 11),
            ('memo', 'function', 14, 14), ('memo.cache', 'method', 14, 14)])

    def test_a_function_a_top_level_call_wraps_is_defined_by_its_name(self):
        source = textwrap.dedent('''\
            /**
             * Groups the elements of a collection by a key.
             */
            var groupBy = createAggregator(function(result, value, key) {
              result[key] = value;
            });
            export const Button = React.forwardRef((props, ref) => {
              function label() { return props.label; }
              return label();
            });
            const sum = curry(2, async function (a, b) { return a + b; });
            const app = express();
            const ready = new Promise((resolve) => { resolve(1); });
            const later = wrap(1)(function () { return 2; });
            const predicates = toFlatObject({}, function filter(prop) { return prop; });
            function main() {
              const timer = setTimeout(() => { tick(); }, 100);
              return timer;
            }
            ''')
        for name in ('w.js', 'w.ts'):
            with self.subTest(name):
                self.assertEqual(definitions_of(source.encode(), name), {
                    ('groupBy', 4, 6), ('Button', 7, 10), ('Button.label', 8, 8),
                    ('sum', 11, 11), ('filter', 15, 15), ('main', 16, 19)})
        chunks = code_search.chunk_file(source.encode(), 'w.js', 'x' * 64).chunks
        group_by = next(c for c in chunks if c['symbol'] == 'groupBy')
        self.assertEqual(group_by['doc'], 'Groups the elements of a collection by a key.')

    def test_a_wrapped_function_in_a_callback_is_code_but_in_a_module_wrapper_is_not(self):
        source = textwrap.dedent('''\
            describe('suite', () => {
              it('works', () => {
                const result = items.map((x) => {
                  return x * 2;
                });
              });
            });
            ;(function() {
              var groupBy = createAggregator(function(result, value, key) {
                push(result, key);
              });
            }.call(this));
            define(['a', 'b'], function (a, b) {
              var wrapped = wrap(function () {
                return a;
              });
            });
            new Promise(function (resolve) {
              var later = debounce(function () {
                resolve();
              });
            });
            ''')
        for name in ('c.js', 'c.ts'):
            with self.subTest(name):
                self.assertEqual(definitions_of(source.encode(), name),
                                 {('groupBy', 9, 11), ('wrapped', 14, 16)})

    def test_a_function_named_async_may_wrap_one(self):
        source = textwrap.dedent('''\
            export const never: Effect<never> = async<never>(function () {
              const interval = setInterval(noop, 2 ** 31 - 1)
              return sync(() => clearInterval(interval))
            })
            export const later = async (x: number) => {
              return x
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'a.ts'),
                         {('never', 1, 4), ('later', 5, 7)})

    def test_a_wrapped_typescript_component_with_type_arguments_is_defined(self):
        source = textwrap.dedent('''\
            const Bar = React.memo<{
              height: number
            }>(({ height }) => (
              <div style={{ height }} />
            ))
            const Visualizer = React.forwardRef<
              HTMLDivElement,
              { state?: string } & Attrs
            >(({ state, ...props }, ref) => {
              function update() {}
              return <div ref={ref} {...props} />
            })
            export const EmptyError: EmptyErrorCtor = createErrorClass(
              (_super) =>
                function EmptyErrorImpl(this: any) {
                  this.name = 'EmptyError';
                }
            );
            const ids = items.map((item) => item.id);
            const first = pick<Item, Key>(items, 0);
            ''')
        self.assertEqual(definitions_of(source.encode(), 'bar.tsx'), {
            ('Bar', 1, 5), ('Visualizer', 6, 12), ('Visualizer.update', 10, 10),
            ('EmptyError', 13, 18), ('EmptyError.EmptyErrorImpl', 15, 17)})

    def test_typescript_type_aliases_and_parenthesized_functions(self):
        source = textwrap.dedent('''\
            type SearchableItem = z.infer<typeof searchableItemSchema>

            function searchItems(items: SearchableItem[]) {
              return items
            }
            export type ChatIds = {
              nextMessageId(): string
            } & Base
            type Unwrap<T> = T extends Promise<infer U> ? U : T
            export const isArrayLike = (<T>(x: any): x is ArrayLike<T> => x && x.length);
            export const COMPLETE = (() => make('C', undefined) as Complete)();
            ''')
        self.assertEqual(definitions_of(source.encode(), 'z.ts'), {
            ('SearchableItem', 1, 1), ('searchItems', 3, 5), ('ChatIds', 6, 8),
            ('ChatIds.nextMessageId', 7, 7), ('Unwrap', 9, 9), ('isArrayLike', 10, 10)})

    def test_an_invoked_function_or_a_chained_assignment_is_defined_by_its_binding(self):
        source = textwrap.dedent('''\
            const kindOf = (cache => thing => {
              return cache[thing];
            })(Object.create(null));
            var baseCreate = (function() {
              function object() {}
              return function(proto) { return new object; };
            }());
            var proto = module.exports = function(options) {
              function router(req, res, next) { router.handle(req, res, next); }
              return router;
            };
            const sum = (a + b);
            const value = (compute)(1);
            const later = (function named() { return 1; })();
            ''')
        for name in ('i.js', 'i.ts'):
            with self.subTest(name):
                self.assertEqual(definitions_of(source.encode(), name), {
                    ('kindOf', 1, 3), ('baseCreate', 4, 7), ('baseCreate.object', 5, 5),
                    ('proto', 8, 11), ('proto.router', 9, 9), ('named', 14, 14)})


    def test_a_kotlin_primary_constructor_on_its_own_line_is_part_of_the_class_header(self):
        source = textwrap.dedent('''\
            class MultipartBody internal constructor(val parts: List<Part>) {
              class Builder
                @JvmOverloads
                constructor(
                  boundary: String = "x",
                ) {
                  fun addPart(part: Part) = apply { parts += part }
                }
            }
            class Reader
              @Throws(IOException::class)
              internal constructor(source: Source) : Closeable {
              override fun close() {}
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'Body.kt'), {
            ('MultipartBody', 1, 9), ('MultipartBody.Builder', 2, 8),
            ('MultipartBody.Builder.addPart', 7, 7), ('Reader', 10, 14),
            ('Reader.close', 13, 13)})

    def test_kotlin_getters_and_setters_are_named_after_their_property(self):
        source = textwrap.dedent('''\
            class Dispatcher {
              /** The most requests run at once. */
              var maxRequests = 64
                get() = synchronized(this) { field }
                set(maxRequests) {
                  field = maxRequests
                }
              var count: Int = 0
                private set
              val isEmpty: Boolean get() = count == 0
              val codec = object : Codec {
                override fun decode(x: Int): Int = x
              }
              fun run() {
                val x = 1
                get(0)
                set(x) { }
              }
            }
            private val LogRecord.androidLevel: Int
              get() =
                when {
                  level > 0 -> 5
                  else -> 3
                }
            val certificate = decode(pem)
              as Certificate
            fun parse(pem: String) = decode(pem)
              as Certificate
            ''')
        self.assertEqual(definitions_of(source.encode(), 'D.kt', accessors=True), {
            ('Dispatcher', 1, 19), ('Dispatcher.maxRequests', 3, 4),
            ('Dispatcher.maxRequests', 5, 7), ('Dispatcher.isEmpty', 10, 10),
            ('Dispatcher.codec.<anonymous>.decode', 12, 12), ('Dispatcher.run', 14, 18),
            ('androidLevel', 20, 25), ('parse', 28, 29)})
        chunks = code_search.chunk_file(source.encode(), 'D.kt', 'x' * 64).chunks
        getter = next(c for c in chunks if c['kind'] == 'getter')
        self.assertEqual(getter['doc'], 'The most requests run at once.')
        self.assertEqual(next(c for c in chunks if c['symbol'] == 'androidLevel')['receiver'],
                         'LogRecord')

    def test_a_java_enum_constant_with_arguments_names_the_methods_of_its_body(self):
        source = textwrap.dedent('''\
            enum Oid {
              CommonName("2.5.4.3"), KP_TimeStamping("1.3.6.1", "timeStamping") {
                boolean registerNames() { return false; }
              },
              OIW_DSA("1.3.14.3.2.12") {
                boolean registerNames() { return false; }
              },
              @Deprecated PLAIN {
                boolean registerNames() { return true; }
              };
              Oid(String oid) { }
              Oid(String oid, String name) { }
              boolean registerNames() { return true; }
              Signature verifier(Key key) throws IOException, InvalidKeyException {
                return null;
              }
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'Oid.java'), {
            ('Oid', 1, 17), ('Oid.KP_TimeStamping.registerNames', 3, 3),
            ('Oid.OIW_DSA.registerNames', 6, 6), ('Oid.PLAIN.registerNames', 9, 9),
            ('Oid.Oid', 11, 11), ('Oid.Oid', 12, 12), ('Oid.registerNames', 13, 13),
            ('Oid.verifier', 14, 16)})
        last = textwrap.dedent('''\
            enum E4 {
                A("a") {
                    String f() { return "A"; }
                },
                B("b");
                E4(String s) { }
                abstract int g();
            }
            ''')        # B("b"); is the last constant, not a method without a body
        self.assertEqual(definitions_of(last.encode(), 'E4.java'), {
            ('E4', 1, 8), ('E4.A.f', 3, 3), ('E4.E4', 6, 6), ('E4.g', 7, 7)})

    def test_an_annotated_java_constant_has_a_body_and_a_static_block_has_none(self):
        source = textwrap.dedent('''\
            enum E {
              A(1), @Deprecated B(2) {
                void m() {}
              },
              C(3), /* note */ D(4) {
                void m() {}
              };
              E(int x) {}
              void m() {}
              static {
                Runnable r = new Runnable() {
                  public void run() {}
                };
              }
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'E.java'), {
            ('E', 1, 15), ('E.B.m', 3, 3), ('E.D.m', 6, 6), ('E.E', 8, 8), ('E.m', 9, 9),
            ('E.<anonymous>.run', 12, 12)})

    def test_java_calls_after_anonymous_classes_and_arrays_in_headers_are_no_definitions(self):
        source = textwrap.dedent('''\
            class A {
              Object x = new Object() {}.hashCode();
              static final TypeAdapter<Class> CLASS = new TypeAdapter<Class>() {
                public void write(int v) {}
              }.nullSafe();
            }
            @interface B {
              String[] names() default {};
              String[] more() default {"x", "y"};
              int n() default 1;
            }
            record C(@Ann({1}) int b) {}
            class G<@Ann({1}) T> {
              void m() {
                executor.submit(new Runnable() {
                  public void run() {}
                });
              }
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'A.java'), {
            ('A', 1, 6), ('A.<anonymous>.write', 4, 4), ('B', 7, 11), ('B.names', 8, 8),
            ('B.more', 9, 9), ('B.n', 10, 10), ('C', 12, 12), ('G', 13, 19), ('G.m', 14, 18),
            ('G.m.<anonymous>.run', 16, 16)})

    def test_kotlin_accessors_after_locals_receivers_and_initializers(self):
        source = textwrap.dedent('''\
            class A {
              var counter: Int = 0
                get() {
                  val doubled = field * 2
                  return get(doubled)
                }
                set(@Suppress("X") value) {
                  field = value
                }
              var get: Int = 0
                get() = field + 1
              init {
                val cache = HashMap<String, Int>()
                set(cache) {
                  println(it)
                }
              }
              val id = object : Fn { override fun apply(x: Int) = x }
            }
            val <K, V> Map<K, V>.sizeText: String
              get() { return size.toString() }
            val String?.orBlank: String get() = this ?: ""
            ''')
        self.assertEqual(definitions_of(source.encode(), 'A.kt', accessors=True), {
            ('A', 1, 19), ('A.counter', 2, 6), ('A.counter', 7, 9), ('A.get', 10, 11),
            ('A.id.<anonymous>.apply', 18, 18), ('sizeText', 20, 21), ('orBlank', 22, 22)})
        chunks = code_search.chunk_file(source.encode(), 'A.kt', 'x' * 64).chunks
        self.assertEqual({c['symbol']: c.get('receiver') for c in chunks
                          if c['symbol'] in ('sizeText', 'orBlank')},
                         {'sizeText': 'Map<K, V>', 'orBlank': 'String?'})

    def test_rust_items_in_a_macro_invoked_as_an_item_are_definitions(self):
        source = textwrap.dedent('''\
            #!/usr/bin/env -S cargo +nightly -Zscript
            macro_rules! cfg_rt { ($($i:item)*) => { $($i)* } }
            cfg_rt! {
                /// Spawns a task.
                pub fn spawn() {}
                impl Runtime {
                    pub fn block_on(&self) {}
                }
            }
            crate::cfg_net! {
                #[cfg(unix)]
                mod unix { pub fn bind() {} }
            }
            neg! {
                impl Neg for Simd<f32>
            }
            fn build() -> TokenStream {
                quote! { fn generated() {} }
            }
            doc! {macro_rules! join {
                () => { fn generated_too() {} }
            }}
            ''')
        self.assertEqual(definitions_of(source.encode(), 'm.rs'), {
            ('cfg_rt', 2, 2), ('spawn', 5, 5), ('Runtime', 6, 8), ('Runtime.block_on', 7, 7),
            ('unix', 11, 12), ('unix.bind', 12, 12), ('build', 17, 19), ('join', 20, 22)})
        chunks = code_search.chunk_file(source.encode(), 'm.rs', 'x' * 64).chunks
        self.assertEqual(next(c for c in chunks if c['symbol'] == 'spawn')['doc'],
                         'Spawns a task.')

    def test_a_kotlin_enum_entry_names_the_methods_of_its_body(self):
        source = textwrap.dedent('''\
            enum class TransferKind {
              CHUNKED {
                override fun setBody(x: Int) {
                  chunked(x)
                }
              },
              @Deprecated("old")
              FIXED_LENGTH {
                override fun setBody(x: Int) = fixed(x)
              },
              PLAIN,
              ;

              abstract fun setBody(x: Int)
            }
            enum class Color(val rgb: Int) {
              RED(1) { override fun shade() = 2 },
              GREEN(2);
              open fun shade() = 0
            }
            fun after() = 3
            ''')
        self.assertEqual(definitions_of(source.encode(), 'E.kt'), {
            ('TransferKind', 1, 15), ('TransferKind.CHUNKED.setBody', 3, 5),
            ('TransferKind.FIXED_LENGTH.setBody', 9, 9), ('TransferKind.setBody', 14, 14),
            ('Color', 16, 20), ('Color.RED.shade', 17, 17), ('Color.shade', 19, 19),
            ('after', 21, 21)})

    def test_symbol_finds_an_anonymous_default_export_by_its_file_name(self):
        repo = self.tmp / 'repo'
        write(repo / 'lib' / 'helpers' / 'parseHeaders.js',
              'export default (rawHeaders) => {\n  return {};\n};\n')
        write(repo / 'lib' / 'http.js', 'export function parseHeaders(raw) {\n  return raw;\n}\n')
        write(repo / 'lib' / 'other.js', 'export default function () {\n  return 1;\n}\n')
        write(repo / 'lib' / 'parseHeaders.test.js', 'export default () => {\n  return 2;\n};\n')
        write(repo / 'parseHeaders.py', 'def default():\n    return 3\n')
        out = self.tmp / 'index.json'
        self.assertEqual(cli('index', repo, '--out', out).returncode, 0)
        result = cli('symbol', 'parseHeaders', '--index', out, '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([(hit['path'], hit['symbol'], hit['match'])
                          for hit in json.loads(result.stdout)['results']],
                         [('lib/http.js', 'parseHeaders', 'exact'),
                          ('lib/helpers/parseHeaders.js', 'default', 'default export')])


class LexerTests(TempDirCase):
    """A wrong guess costs at most its line; a file the lexer cannot follow is cut in
    windows, and the run says so."""

    def test_an_ambiguous_slash_costs_at_most_its_line(self):
        data = (FIXTURES / 'traps.js').read_text(encoding='utf-8')
        expected = oracle_of(FIXTURES / 'traps.js.oracle.jsonl')
        lines = data.split('\n')
        for trap in ('x = a / b; y = /}/.test(s) / 2;', 'z = {} / (a / b) // }',
                     "w = '/' + `/${'}'}/`;", 'if (x) /}/.test(s);'):
            for at in (4, 8, 34, 56):
                with self.subTest(trap=trap, at=at):
                    text = '\n'.join(lines[:at] + [trap] + lines[at:])
                    moved = {(s, a + (a > at), b + (b > at)) for s, a, b in expected}
                    self.assertEqual(definitions_of(text.encode(), 'traps.js'), moved)

    def test_a_comparison_is_not_taken_for_type_arguments_across_statements(self):
        source = textwrap.dedent('''\
            const small = (a: number, b: number) => a<b
            function helper(x: number) {
              return x
            }
            const cmp = (a, b) => a>(b)
            const m = useState<Map<string, number>>(new Map(), () => {
              return 1
            })
            ''')
        self.assertEqual(definitions_of(source.encode(), 'c.ts'), {
            ('small', 1, 1), ('helper', 2, 4), ('cmp', 5, 5), ('m', 6, 8)})

    def test_type_syntax_at_a_line_end_ends_the_definition_as_typescript_does(self):
        source = textwrap.dedent('''\
            export const ignore = () => Effect.void

            export const toUpperCase = (self: S): Uppercase<S> => self.toUpperCase() as Up<S>

            class Observer {
              #result: Result = undefined!
              constructor() {}
            }
            export interface Inspectable {
              toJSON(): unknown
              [NodeInspectSymbol](): unknown
              either(args: A): Either<A, Error>
              is(a: unknown): a is A
            }
            export const withDefault = dual<
              <const A2>(def: A2) => <A>(self: Config<A>) => Config<A | A2>,
              <A, const A2>(self: Config<A>, def: A2) => Config<A | A2>
            >(2, (self, def) => {
              return orElse(self, () => succeed(def))
            })
            ''')
        self.assertEqual(definitions_of(source.encode(), 'e.ts'), {
            ('ignore', 1, 1), ('toUpperCase', 3, 3), ('Observer', 5, 8),
            ('Observer.constructor', 7, 7), ('Inspectable', 9, 14),
            ('Inspectable.toJSON', 10, 10), ('Inspectable.[NodeInspectSymbol]', 11, 11),
            ('Inspectable.either', 12, 12), ('Inspectable.is', 13, 13),
            ('withDefault', 15, 20)})
        conditional = textwrap.dedent('''\
            export const Class = <Self = never>(identifier: string) =>
            <Fields extends Struct.Fields>(
              fields: Fields
            ): [Self] extends [never] ? MissingSelfGeneric<"Class">
              : Class<Self, Fields> =>
              makeClass({ identifier, fields })
            ''')
        self.assertEqual(definitions_of(conditional.encode(), 'c.ts'), {('Class', 1, 6)})

    def test_a_return_type_with_type_arguments_keeps_the_function_whole(self):
        source = textwrap.dedent('''\
            export const lift = (f: F) => <A, B>(self: Pair<A, B>): Pair<B, A> =>
              swap(f(self))
            export const isPair: Guard = (u: unknown): u is Pair<unknown, unknown> => check(u)
            export const decode: Decoder = (s: string): Map<string, number> => parse(s)
            class Codec {
              static create = (s: string): Map<string, number> => {
                return parse(s)
              }
            }
            const handlers = {
              onDone: (x: X): Result<X, E> => ok(x),
            }
            const make = function (a: A): Pair<A, A> {
              return pair(a, a)
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'r.ts'), {
            ('lift', 1, 2), ('isPair', 3, 3), ('decode', 4, 4), ('Codec', 5, 9),
            ('Codec.create', 6, 8), ('handlers.onDone', 11, 11), ('make', 13, 15)})

    def test_a_value_bound_with_a_cast_is_read_without_it(self):
        source = textwrap.dedent('''\
            const Proto = {
              toString() {
                return "P"
              },
            } as const
            export const copy = (<A>(self: Array<A>): Array<A> => self.slice()) as any
            export const withTrace: WithTrace = function () {
              return trace()
            } satisfies Tracer
            export const coerce = {
              string: ((arg) => make(arg)) as (typeof ZodString)["create"],
            }
            ''')
        self.assertEqual(definitions_of(source.encode(), 'k.ts'), {
            ('Proto.toString', 2, 4), ('copy', 6, 6), ('withTrace', 7, 9),
            ('coerce.string', 11, 11)})

    def test_what_a_class_or_interface_extends_names_its_functions(self):
        source = textwrap.dedent('''\
            export class Lowercase extends transform(Str, Lower, {
              decode: (s) => s.toLowerCase(),
              encode: (s) => {
                return s
              },
            }) {}
            export interface BracketOut extends Op<"BracketOut", {
              acquire(): Effect<unknown>
            }> {}
            ''')
        self.assertEqual(definitions_of(source.encode(), 'x.ts'), {
            ('Lowercase', 1, 6), ('Lowercase.decode', 2, 2), ('Lowercase.encode', 3, 5),
            ('BracketOut', 7, 9), ('BracketOut.acquire', 8, 8)})

    def test_an_unbalanced_file_is_cut_in_windows_and_reported(self):
        repo = self.tmp / 'repo'
        write(repo / 'broken.go', 'package p\n\nfunc F() {\n\tif x {\n}\n' * 3)
        write(repo / 'ok.go', 'package p\n\nfunc G() {}\n')
        out = self.tmp / 'index.json'
        result = cli('index', repo, '--out', out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn('broken.go', result.stdout + result.stderr)
        self.assertIn('1', result.stdout)
        dry = cli('index', repo, '--dry-run')
        self.assertIn('broken.go', dry.stdout)
        self.assertRegex(dry.stdout, r'broken\.go.*window')
        outline = json.loads(cli('outline', 'broken.go', '--index', out, '--json').stdout)
        self.assertEqual({c['kind'] for c in outline['files'][0]['chunks']}, {'window'})

    def test_a_reader_that_fails_costs_its_file_its_names_not_the_run(self):
        repo = self.tmp / 'repo'
        write(repo / 'a.go', 'package a\n\n// Parse reads a number.\nfunc Parse() int { return 1 }\n')
        write(repo / 'b.go', 'package a\n\nfunc Other() {}\n')

        def broken(scanned):
            if 'Parse' in scanned.text:
                raise IndexError('a bug')
            return code_search.go_declarations(scanned)
        with mock.patch.dict(code_search.FINDERS, {'go': broken}):
            chunks, skipped = code_search.scan_tree(repo)
            read = code_search.chunk_file((repo / 'a.go').read_bytes(), 'a.go', 'x' * 64)
        self.assertEqual([(c['path'], c['symbol']) for c in chunks],
                         [('a.go', 'a.go:L1-4'), ('b.go', 'Other'), ('b.go', '<module>')])
        self.assertEqual(skipped, [])
        self.assertEqual(read.note, "its definitions could not be read (IndexError('a bug')): "
                                    'indexed in line windows')

    def test_minified_javascript_is_cut_in_windows(self):
        line = 'function f(a){return a+1};' * 400
        read = code_search.chunk_file(line.encode(), 'm.min.js', 'x' * 64)
        self.assertEqual({c['kind'] for c in read.chunks}, {'window'})
        self.assertIn('minified', read.note)
        self.assertLessEqual(len(read.chunks[0]['text']), code_search.LONG_LINE)

    def test_a_long_string_in_javascript_is_data_not_minified_code(self):
        source = ('const EMOJI = "%s";\nexport function makeJwt(a) {\n  return a;\n}\n'
                  % ('\U0001F600' * 6000))
        read = code_search.chunk_file(source.encode(), 'string.test.ts', 'x' * 64)
        self.assertEqual(read.note, '')
        self.assertIn(('makeJwt', 2, 4), {(c['symbol'], c['start'], c['end'])
                                          for c in read.chunks})

    def test_a_long_data_line_outside_javascript_keeps_the_definitions(self):
        table = ', '.join(str(n) for n in range(2000))       # a table, not minified code
        source = f'package flate\n\nvar tokens = []int{{{table}}}\n\nfunc TestBlockHuff() {{\n}}\n'
        read = code_search.chunk_file(source.encode(), 'huff_test.go', 'x' * 64)
        self.assertEqual(read.note, '')
        self.assertIn(('TestBlockHuff', 5, 6), {(c['symbol'], c['start'], c['end'])
                                                for c in read.chunks})


class SearchTests(TempDirCase):
    """search, --lang and the text files' windows."""

    def setUp(self):
        super().setUp()
        shutil.copytree(FIXTURES, self.tmp / 'repo')
        write(self.tmp / 'repo' / 'deploy' / 'Dockerfile', 'FROM python:3.12\nRUN make\n')
        write(self.tmp / 'repo' / 'db' / 'schema.sql',
              '\n'.join(f'-- line {n}' for n in range(130)) + '\nCREATE TABLE invoices (id int);\n')
        self.out = self.tmp / 'index.json'
        self.assertEqual(cli('index', self.tmp / 'repo', '--out', self.out).returncode, 0)

    def search(self, *args):
        result = cli('search', *args, '--index', self.out, '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)['results']

    def test_doc_comment_words_find_the_function(self):
        hits = self.search('adds v at the front', '--top-k', '3')
        self.assertEqual((hits[0]['path'], hits[0]['symbol']), ('traps.go', 'List.Push'))

    def test_lang_filters_and_repeats(self):
        hits = self.search('area', '--lang', 'rust', '--lang', 'kotlin', '--top-k', '50')
        self.assertTrue(hits)
        self.assertEqual({h['language'] for h in hits} - {'rust', 'kotlin'}, set())
        self.assertEqual(cli('search', 'area', '--lang', 'cobol', '--index', self.out)
                         .returncode, 2)

    def test_text_files_are_windows_named_where_they_are(self):
        hits = self.search('create table invoices', '--top-k', '1')
        self.assertEqual((hits[0]['path'], hits[0]['kind']), ('db/schema.sql', 'window'))
        self.assertRegex(hits[0]['symbol'], r'^db/schema\.sql:L\d+-\d+$')
        self.assertIn('CREATE TABLE invoices', hits[0]['text'])
        docker = self.search('FROM python', '--lang', 'dockerfile')
        self.assertEqual(docker[0]['path'], 'deploy/Dockerfile')


class IndexTests(TempDirCase):
    """Incremental and parallel indexing of a polyglot tree."""

    def make_tree(self, copies):
        repo = self.tmp / 'repo'
        for number in range(copies):
            shutil.copytree(FIXTURES, repo / f'copy{number:02}',
                            ignore=shutil.ignore_patterns('*.jsonl'))
        return repo

    def test_one_and_two_jobs_write_identical_indexes(self):
        repo = self.make_tree(40)
        one, two = self.tmp / 'one.json', self.tmp / 'two.json'
        self.assertEqual(cli('index', repo, '--out', one, '--jobs', '1').returncode, 0)
        self.assertEqual(cli('index', repo, '--out', two, '--jobs', '2').returncode, 0)
        first, second = json.loads(one.read_bytes()), json.loads(two.read_bytes())
        for document in (first, second):
            document.pop('indexed_at')
            document.pop('scan_started_ns')
        self.assertEqual(first, second)

    def test_a_new_parser_version_reparses_once(self):
        repo = self.make_tree(1)
        out = self.tmp / 'index.json'
        cli('index', repo, '--out', out)
        document = json.loads(out.read_bytes())
        document['parser_version'] = code_search.PARSER_VERSION - 1
        out.write_text(json.dumps(document), encoding='utf-8')
        again = cli('index', repo, '--out', out)
        self.assertRegex(again.stdout, r'갱신 파일: [1-9]')
        third = cli('index', repo, '--out', out)
        self.assertIn('갱신 파일: 0', third.stdout)


FUZZ = textwrap.dedent('''
    import hashlib, random, sys
    sys.path.insert(0, sys.argv[1])
    import code_search
    from pathlib import Path
    files = sorted(p for p in Path(sys.argv[2]).iterdir() if not p.name.endswith('.jsonl'))
    texts = [p.read_bytes() for p in files]
    rng = random.Random(int(sys.argv[3]))
    junk = [b'/', b"'", b'"', b'`', b'${', b'{', b'}', b'<', b'>', b'=>', b'/*', b'*/',
            b'r#"', b'"""', b'\\\\', b'\\n', b'\\r\\n', b'fun ', b'func ', b'class ', b'#[', b'@']
    problems = 0
    for round in range(int(sys.argv[4])):
        number = rng.randrange(len(files))
        data, name = texts[number], files[number].name
        choice = rng.random()
        if choice < 0.3:
            data = data[:rng.randrange(len(data) + 1)]
        elif choice < 0.6:
            other = texts[rng.randrange(len(texts))]
            data = data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]
        elif choice < 0.8:
            for _ in range(rng.randrange(1, 6)):
                at = rng.randrange(len(data) + 1)
                data = data[:at] + rng.choice(junk) + data[at:]
        else:
            start = rng.randrange(len(data) + 1)
            data = data[:start] + data[start + rng.randrange(200):]
        read = code_search.chunk_file(data, name, hashlib.sha256(data).hexdigest())
        text = data.decode('utf-8', 'replace')
        text = text[1:] if text.startswith('\\ufeff') else text
        lines = text.split('\\n')
        if lines and lines[-1] == '':
            lines.pop()
        lines = [l[:-1] if l.endswith('\\r') else l for l in lines]
        for chunk in read.chunks:
            cut = code_search.LONG_LINE if chunk['kind'] == 'window' else None
            inside = 1 <= chunk['start'] <= chunk['end'] <= max(len(lines), 1)
            same = chunk['text'] == '\\n'.join(l[:cut] for l in lines[chunk['start'] - 1:chunk['end']])
            if not (inside and same) and lines:
                problems += 1
                print('problem', name, round, chunk['symbol'], chunk['start'], chunk['end'])
    print('rounds', sys.argv[4], 'problems', problems)
''')


class FuzzTests(unittest.TestCase):
    """Random cuts, splices and junk in real files: no crash, no hang, ranges inside."""

    def test_cuts_and_splices(self):
        for seed in (1, 2):
            with self.subTest(seed=seed):
                result = subprocess.run(
                    [sys.executable, '-c', FUZZ, str(ROOT), str(FIXTURES), str(seed), '1500'],
                    capture_output=True, text=True, env=ENV, timeout=300)
                self.assertEqual(result.returncode, 0, result.stderr[-2000:])
                self.assertIn('rounds 1500 problems 0', result.stdout, result.stdout[-2000:])


if __name__ == '__main__':
    unittest.main()

"""code_search.py over several repositories: labelled indexes searched together,
every hit with its repo, and the repos list.  Standard library only."""
import json
import os

from tests.support import CODE_TOOL, TempDirCase, run_cli, write
from tests.test_code_agents import McpSession
from tests.test_code_serve import Server


def cli(*args, **kwargs):
    return run_cli(CODE_TOOL, *args, **kwargs)


class ReposCase(TempDirCase):
    """Two small repositories: a Python back end and a TypeScript front end."""

    def setUp(self):
        super().setUp()
        self.api, self.web = self.tmp / 'api', self.tmp / 'web'
        write(self.api / 'billing.py', (
            'def total_with_tax(amount, rate):\n'
            '    """Total of an invoice including tax."""\n'
            '    return amount * (1 + rate)\n'
            '\n\n'
            'def refund(order):\n'
            '    """Give the money of an order back."""\n'
            '    return order\n'))
        write(self.web / 'src' / 'cart.ts', (
            'export class Cart {\n'
            '  /** The cart total with tax, shown at checkout. */\n'
            '  totalWithTax(rate: number): number {\n'
            '    return this.sum * (1 + rate);\n'
            '  }\n'
            '}\n'))
        write(self.web / 'billing.py', 'def render_invoice():\n    return "invoice"\n')
        for root, name in ((self.api, 'api.json'), (self.web, 'web.json')):
            result = cli('index', root, '--out', self.tmp / name)
            self.assertEqual(result.returncode, 0, result.stderr)
        self.both = ('--index', self.tmp / 'api.json', '--index', f"front={self.tmp / 'web.json'}")


class SearchTests(ReposCase):
    def test_hits_carry_their_repo(self):
        result = cli('search', 'total with tax', *self.both, '--json', '--top-k', '5')
        self.assertEqual(result.returncode, 0, result.stderr)
        hits = json.loads(result.stdout)['results']
        self.assertEqual({(h['repo'], h['symbol']) for h in hits[:2]},
                         {('api', 'total_with_tax'), ('front', 'Cart.totalWithTax')})
        human = cli('search', 'refund money', *self.both).stdout
        self.assertRegex(human, r'^\[code-\d+\] api:billing\.py:6-8 refund\n')

    def test_one_index_output_is_unchanged(self):
        alone = cli('search', 'refund money', '--index', self.tmp / 'api.json').stdout
        self.assertRegex(alone, r'^\[code-\d+\] billing\.py:6-8 refund\n')
        hit = json.loads(cli('search', 'refund', '--index', self.tmp / 'api.json', '--json')
                         .stdout)['results'][0]
        self.assertEqual(hit['repo'], 'api')
        one_shot = json.loads(cli(self.api, 'refund', '--json').stdout)['results'][0]
        self.assertEqual(one_shot, dict(hit, id=one_shot['id']))     # the same shape

    def test_two_indexes_rank_as_one_index_of_both(self):
        """Shared statistics: the merged ranking is the ranking of one index over both."""
        import shutil
        shutil.copytree(self.api, self.tmp / 'both' / 'api')
        shutil.copytree(self.web, self.tmp / 'both' / 'web')
        cli('index', self.tmp / 'both', '--out', self.tmp / 'both.json')
        for question in ('invoice', 'total with tax', 'refund money', 'cart checkout'):
            with self.subTest(question=question):
                merged = json.loads(cli('search', question, *self.both, '--json', '--top-k',
                                        '10').stdout)['results']
                one = json.loads(cli('search', question, '--index', self.tmp / 'both.json',
                                     '--json', '--top-k', '10').stdout)['results']
                self.assertEqual([h['symbol'] for h in merged], [h['symbol'] for h in one])
                self.assertEqual([h['score'] for h in merged],
                                 sorted((h['score'] for h in merged), reverse=True))

    def test_refusals(self):
        for args in (('--index', self.tmp / 'api.json', '--index', self.tmp / 'api.json'),
                     ('--index', f"x={self.tmp / 'api.json'}", '--index',
                      f"x={self.tmp / 'web.json'}")):
            with self.subTest(args=args):
                result = cli('search', 'tax', *args)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        write(self.tmp / 'other' / 'api' / 'x.py', 'def f():\n    pass\n')
        cli('index', self.tmp / 'other' / 'api', '--out', self.tmp / 'api2.json')
        clash = cli('search', 'f', '--index', self.tmp / 'api.json', '--index',
                    self.tmp / 'api2.json')
        self.assertEqual(clash.returncode, 2)
        self.assertIn("labelled 'api'", clash.stderr)


class LookupTests(ReposCase):
    def test_symbol_grep_outline_at_read(self):
        symbols = json.loads(cli('symbol', 'total_with_tax', *self.both, '--json').stdout)
        self.assertEqual([(h['repo'], h['symbol']) for h in symbols['results']],
                         [('api', 'total_with_tax')])
        grep = cli('grep', 'tax', *self.both).stdout.splitlines()
        self.assertIn('api:billing.py:1:def total_with_tax(amount, rate):', grep)
        self.assertIn('front:src/cart.ts:2:  /** The cart total with tax, shown at checkout. */',
                      grep)
        found = json.loads(cli('grep', 'invoice', *self.both, '--json').stdout)
        self.assertEqual({m['repo'] for m in found['matches']}, {'api', 'front'})
        outline = json.loads(cli('outline', *self.both, '--json').stdout)
        self.assertEqual([(f['repo'], f['path']) for f in outline['files']],
                         [('api', 'billing.py'), ('front', 'billing.py'),
                          ('front', 'src/cart.ts')])
        ambiguous = cli('at', 'billing.py:1', *self.both)
        self.assertEqual(ambiguous.returncode, 2)
        self.assertIn('several repositories (api, front): write REPO:billing.py', ambiguous.stderr)
        at = cli('at', 'front:billing.py:1', *self.both)
        self.assertRegex(at.stdout, r'^\[code-\d+\] front:billing\.py:1-2 render_invoice')
        read = json.loads(cli('read', 'front:src/cart.ts:3-3', *self.both, '--json').stdout)
        self.assertEqual((read['repo'], read['text']),
                         ('front', '  totalWithTax(rate: number): number {'))
        ls = json.loads(cli('ls', *self.both, '--json').stdout)
        self.assertEqual([(e['path'], e['files']) for e in ls['entries']],
                         [('api:', 1), ('front:', 2)])
        if not os.path.splitdrive('f:x')[0]:         # a one-letter label (not C: on Windows)
            short = ('--index', self.tmp / 'api.json', '--index', f"f={self.tmp / 'web.json'}")
            read = json.loads(cli('read', 'f:src/cart.ts:3-3', *short, '--json').stdout)
            self.assertEqual((read['repo'], read['path']), ('f', 'src/cart.ts'))

    def test_trace_finds_frames_in_either_repo(self):
        trace = ('Traceback (most recent call last):\n'
                 '  File "/deploy/api/billing.py", line 3, in total_with_tax\n'
                 '    return amount * (1 + rate)\n'
                 'TypeError: boom\n')
        traced = json.loads(cli('trace', '-', *self.both, '--json', input=trace).stdout)
        frame = traced['exceptions'][0]['frames'][0]
        self.assertEqual((frame['repo'], frame['path'], frame['chunk']['symbol']),
                         ('api', 'billing.py', 'total_with_tax'))

    def test_mcp_serves_both(self):
        server = McpSession(self, *self.both)
        server.initialize()
        found = server.result('search_code', {'query': 'total with tax'})['structuredContent']
        self.assertEqual({h['repo'] for h in found['results'][:2]}, {'api', 'front'})
        only = server.result('search_code', {'query': 'total with tax', 'repo': 'front'})
        self.assertEqual({h['repo'] for h in only['structuredContent']['results']}, {'front'})
        read = server.result('read_file', {'path': 'front:src/cart.ts', 'start': 1, 'end': 1})
        self.assertEqual(read['structuredContent']['text'], 'export class Cart {')
        self.assertTrue(server.result('read_file', {'path': 'billing.py'})['isError'])
        status = server.result('index_status', {})['structuredContent']
        self.assertEqual([r['repo'] for r in status['repos']], ['api', 'front'])
        status = server.result('index_status', {'repo': 'front'})['structuredContent']
        self.assertEqual(status['repo'], 'front')        # every tool takes repo

    def test_a_damaged_index_does_not_stop_answers_from_another_named_one(self):
        both = ('--index', f"api={self.tmp / 'api.json'}", self.both[2], self.both[3])
        server, served = McpSession(self, *both), Server(self, *both)
        server.initialize()
        (self.tmp / 'web.json').write_text('garbage')
        only = server.result('search_code', {'query': 'total with tax', 'repo': 'api'})
        self.assertEqual({h['repo'] for h in only['structuredContent']['results']}, {'api'})
        every = server.result('search_code', {'query': 'total with tax'})   # over both: says
        self.assertTrue(every['isError'])                                  # which is broken
        self.assertIn('web.json', every['content'][0]['text'])
        self.assertEqual(served.call('/api/search?q=total+tax&repo=api')[0], 200)
        self.assertEqual(served.call('/api/search?q=total+tax&repo=front')[0], 503)
        self.assertEqual(served.call('/api/health')[0], 503)


class ReposListTests(ReposCase):
    def write_list(self, text):
        write(self.tmp / 'repos.toml', text)
        return self.tmp / 'repos.toml'

    def states(self, listing):
        result = cli('repos', listing, '--json')
        self.assertEqual(result.returncode, 0, result.stderr)
        return [(row['name'], row['state']) for row in json.loads(result.stdout)['repos']]

    def test_a_toml_list_is_read_as_the_readme_shows_it(self):
        listing = self.write_list('[[repo]]\nname = "api"\nroot = "api"\nindex = "api.json"\n'
                                  '\n# the front end\n[[repo]]\nname = "front"\nroot = "web"\n'
                                  'index = "web.json"\n')
        self.assertEqual(self.states(listing), [('api', 'fresh'), ('front', 'fresh')])
        found = json.loads(cli('search', 'total with tax', '--repos', listing, '--json').stdout)
        self.assertEqual({hit['repo'] for hit in found['results']}, {'api', 'front'})
        for text, error in (('', 'the list of repositories is empty'),
                            ('[]', 'the list of repositories is empty'),
                            ('[{"name": "a", "root": "api", "index": "x.json"}, {"name": "b", '
                             '"root": "web", "index": "./x.json"}]',
                             'repositories a and b have one index file'),
                            ('{"repos": 1}', 'expected a list of {name, root, index}')):
            empty = cli('repos', self.write_list(text))
            self.assertEqual((empty.returncode, empty.stderr.count('\n')), (2, 1))
            self.assertIn(error, empty.stderr)

    def test_a_repository_not_indexed_yet_is_left_out_with_a_warning(self):
        listing = self.write_list('[[repo]]\nname = "api"\nroot = "api"\nindex = "api.json"\n'
                                  '[[repo]]\nname = "later"\nroot = "web"\nindex = "later.json"\n')
        found = cli('search', 'total with tax', '--repos', listing, '--json')
        self.assertEqual(found.returncode, 0, found.stderr)
        self.assertEqual({hit['repo'] for hit in json.loads(found.stdout)['results']}, {'api'})
        self.assertEqual(found.stderr, f'code_search.py: warning: repository later is not indexed '
                                       f'yet: left out (run: code_search.py repos {listing} '
                                       f'--update)\n')
        gone = self.write_list('[[repo]]\nname = "api"\nroot = "api"\nindex = "api.json"\n'
                               '[[repo]]\nname = "gone"\nroot = "nosuch"\nindex = "g.json"\n')
        found = cli('search', 'total with tax', '--repos', gone)      # --update cannot help
        self.assertEqual((found.returncode, found.stderr),
                         (0, f"code_search.py: warning: repository gone is not indexed yet: "
                             f"left out (its root {self.tmp / 'nosuch'} is not a folder)\n"))
        nothing = self.write_list('[[repo]]\nname = "later"\nroot = "web"\n')
        refused = cli('search', 'total', '--repos', nothing)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(f'no repository of {nothing} is indexed yet', refused.stderr)

    def test_a_skipped_file_does_not_make_a_repository_stale(self):
        write(self.api / 'blob.py', b'\xff\xfe\x00binary')
        listing = self.write_list('[[repo]]\nname = "api"\nroot = "api"\nindex = "api.json"\n'
                                  '[[repo]]\nname = "gone"\nroot = "nothere"\n')
        self.assertEqual(self.states(listing), [('api', 'stale'), ('gone', 'no root')])
        update = cli('repos', listing, '--update')
        self.assertEqual(update.returncode, 2, update.stderr)     # a missing root is misuse
        self.assertIn('gone: root folder does not exist', update.stderr)
        self.assertTrue(update.stderr.startswith('api:blob.py:1: skipped: binary file'))
        self.assertEqual(self.states(listing), [('api', 'fresh'), ('gone', 'no root')])
        write(self.api / 'new.py', 'def added():\n    pass\n')
        self.assertEqual(self.states(listing)[0], ('api', 'stale'))
        os.rename(self.api, self.tmp / 'moved')       # what the index holds is still said
        rows = json.loads(cli('repos', listing, '--json').stdout)['repos']
        self.assertEqual([(row['state'], row['files'] > 0, bool(row['indexed_at']))
                          for row in rows], [('no root', True, True), ('no root', False, False)])

    def test_a_damaged_file_record_makes_a_repository_stale_not_a_traceback(self):
        listing = self.write_list('[[repo]]\nname = "api"\nroot = "api"\nindex = "api.json"\n')
        index = json.loads((self.tmp / 'api.json').read_text(encoding='utf-8'))
        for damage in ('size', 'record'):
            with self.subTest(damage=damage):
                copy = json.loads(json.dumps(index))
                if damage == 'size':
                    del copy['files']['billing.py']['size']
                else:
                    copy['files']['billing.py'] = 3
                (self.tmp / 'api.json').write_text(json.dumps(copy), encoding='utf-8')
                shown = cli('repos', listing)
                self.assertEqual(shown.returncode, 0, shown.stderr)
                self.assertEqual(self.states(listing), [('api', 'stale')])

    def test_an_index_is_judged_and_updated_with_the_choices_that_made_it(self):
        write(self.api / '.hidden' / 'secret_helper.py', 'def secret_helper():\n    pass\n')
        self.assertEqual(cli('index', self.api, '--out', self.tmp / 'api.json',
                             '--hidden').returncode, 0)
        listing = self.write_list('[[repo]]\nname = "api"\nroot = "api"\nindex = "api.json"\n')
        self.assertEqual(self.states(listing), [('api', 'fresh')])
        self.assertEqual(cli('repos', listing, '--update').returncode, 0)
        found = cli('symbol', 'secret_helper', '--index', self.tmp / 'api.json')
        self.assertIn('.hidden/secret_helper.py', found.stdout)

"""Helpers the test modules share: run a tool as a real process, write a file, a test
case with a fresh temporary folder.  Standard library only."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE_TOOL = ROOT / 'code_search.py'
NOTES_TOOL = ROOT / 'notes_search.py'
ENV = dict(os.environ, PYTHONIOENCODING='utf-8', PYTHONDONTWRITEBYTECODE='1')
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def run_cli(tool, *args, cwd=None, timeout=120, input=None, env=None):
    """Run tool (a path to code_search.py or notes_search.py) with args as a process;
    return the CompletedProcess, with text stdout and stderr."""
    return subprocess.run([sys.executable, str(tool), *map(str, args)], cwd=cwd,
                          env=env or ENV, input=input, capture_output=True, text=True,
                          encoding='utf-8', errors='replace', timeout=timeout)


def write(path, data, encoding='utf-8'):
    """Write text or bytes to path, making its folders first; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode(encoding))
    return path


class TempDirCase(unittest.TestCase):
    """A test with a fresh temporary folder in self.tmp."""

    def setUp(self):
        temp = tempfile.TemporaryDirectory()
        self.addCleanup(temp.cleanup)
        self.tmp = Path(temp.name)

"""Helpers the test modules share: run a tool as a real process, write a file, a test
case with a fresh temporary folder.  Standard library only."""
import contextlib
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
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
                          encoding='utf-8', errors='replace', timeout=timeout,
                          stdin=subprocess.DEVNULL if input is None else None)


def run_on_terminal(command, cwd, timeout=300):
    """Run command with its stderr on a pseudo-terminal (stdout a pipe); (the
    CompletedProcess, every byte the terminal showed).  The terminal is read while the
    command runs, so a chatty command never blocks on a full terminal buffer."""
    primary, secondary = pty.openpty()
    shown = []

    def drain():
        with contextlib.suppress(OSError):          # EIO: every writer has closed
            while True:
                block = os.read(primary, 65536)
                if not block:
                    break
                shown.append(block)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        try:
            result = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=secondary, env=ENV,
                                    timeout=timeout)
        finally:
            os.close(secondary)
        reader.join(timeout=30)
    finally:
        os.close(primary)
    return result, b''.join(shown)


CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser') or \
    shutil.which('google-chrome')


def dump_dom(url, timeout=60):
    """The DOM of url after its scripts ran, from headless Chromium. The browser gets a
    session of its own and writes to files, so a hung browser or renderer is killed
    with all its children instead of holding a pipe open forever."""
    with tempfile.TemporaryDirectory() as profile, \
            tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-proxy-server',
             '--no-first-run', '--disable-dev-shm-usage', '--disable-quic',
             '--disable-background-networking', '--disable-component-update',
             '--disable-sync', f'--user-data-dir={profile}',
             '--virtual-time-budget=8000', '--dump-dom', url],
            stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            status = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            process.wait()
        err.seek(0)
        if status != 0:
            raise AssertionError(f'chromium {"timed out" if status is None else status}: '
                                 f'{err.read()[-2000:]!r}')
        out.seek(0)
        return out.read().decode('utf-8')


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

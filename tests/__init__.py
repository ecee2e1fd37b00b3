"""The tools' tests (standard library unittest).

A watchdog ends a test run that hangs, printing every thread's stack to stderr: a run
on a slow or strange machine then fails and says where, instead of running into CI's
time limit without a word.  It is an alarm signal, not a thread, so the test process
stays single-threaded for the worker processes the tools fork."""
import faulthandler
import os
import signal
import sys

RUN_LIMIT_SECONDS = 1500    # one whole run takes a few minutes


def hung(signum, frame):
    sys.stderr.write(f'tests: still running after {RUN_LIMIT_SECONDS} s; every thread:\n')
    faulthandler.dump_traceback(all_threads=True)
    os._exit(70)


if hasattr(signal, 'SIGALRM'):
    signal.signal(signal.SIGALRM, hung)
    signal.alarm(RUN_LIMIT_SECONDS)

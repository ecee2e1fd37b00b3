"""The tools' tests (standard library unittest).

A watchdog ends a test run that hangs, printing every thread's stack to stderr: a run
on a slow or strange machine then fails and says where, instead of running into CI's
time limit without a word."""
import faulthandler

RUN_LIMIT_SECONDS = 1500    # one whole run takes a few minutes

faulthandler.dump_traceback_later(RUN_LIMIT_SECONDS, exit=True)

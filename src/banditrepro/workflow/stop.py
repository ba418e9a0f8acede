"""A stop request (Ctrl-C, SIGTERM) that in-process jobs notice within seconds (docs/decisions.md#content-addressing).

Snakemake answers SIGTERM with "Will exit after finishing currently running jobs" and SIGINT by cancelling
its executor, but a ``run:`` job is a thread it cannot interrupt: a batch going through its shards, or a job
waiting for a kernel's compile (banditrepro/kernel_cache.py), would go on for minutes. ``install`` (the
Snakefile's ``onstart``, main thread) puts a handler before Snakemake's on both signals: it records the
request, then calls the handler it replaced. Batches check the request between shards (``check``) and stop
with ``Stopped``; what they finished is kept and the next run resumes from there.

Cluster jobs run with ``--no-hooks`` (no ``onstart``): a batch SLURM cancels or requeues is killed after
SLURM's KillWait; what it finished is kept, and its retry computes the rest at once (nothing to wait for).
"""

from __future__ import annotations

import signal
import threading

from banditrepro import ReproError

_REQUEST = threading.Event()
_SIGNAL: list[str] = []
_INSTALLED: set[int] = set()


class Stopped(ReproError):
    pass


def _handler(previous):
    def handle(signum, frame):
        _SIGNAL[:] = [signal.Signals(signum).name]
        _REQUEST.set()
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:  # what the signal would have done without us
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    return handle


def install() -> None:
    """Record SIGINT and SIGTERM as a stop request, then do what was done before. Only in the main thread (the
    only one Python lets set handlers); a signal ignored (``nohup``, a background job) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(sig)
        if sig in _INSTALLED or previous == signal.SIG_IGN or previous is None:
            continue
        signal.signal(sig, _handler(previous))
        _INSTALLED.add(sig)


def request(name: str = "a stop request") -> None:
    _SIGNAL[:] = [name]
    _REQUEST.set()


def requested() -> bool:
    return _REQUEST.is_set()


def check() -> None:
    """Raise ``Stopped`` if a stop was requested."""
    if _REQUEST.is_set():
        raise Stopped(f"stopped on {(_SIGNAL or ['a stop request'])[0]}: what was finished is kept; "
                      "run the same command again to resume")


def wait(seconds: float) -> None:
    """Sleep ``seconds``, or less when a stop is requested meanwhile (then ``Stopped``)."""
    _REQUEST.wait(seconds)
    check()


def reset() -> None:
    """Forget a request (tests; a process runs one workflow)."""
    _REQUEST.clear()
    _SIGNAL.clear()

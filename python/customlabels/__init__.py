# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Custom labels for Python code, read by labelprof with every CPU sample.

    import customlabels

    with customlabels.labels(tenant="acme", endpoint="/search"):
        handle()

    @customlabels.labelled(job="reindex")
    def reindex(): ...

Labels nest (an inner block adds keys and overrides values) and follow the
code: per thread, and per asyncio task across awaits once
customlabels.install_asyncio() (or customlabels.run()) has set the event
loop's task factory. They live in a context variable; the thread publishes
them through libcustomlabels (ctypes, no build step) as prepared label sets,
one per distinct set of labels, installed with a single store
(custom_labels_swap). Prepared sets are kept for the life of the process:
label values that are unique per request (ids) belong in the OpenTelemetry
thread context, not here.

The library is found by $CUSTOMLABELS_LIB, then libcustomlabels.so next to
this package, then the system's library path.
"""

import asyncio
import collections.abc
import contextvars
import ctypes
import ctypes.util
import functools
import inspect
import os
import threading

__all__ = ["labels", "labelled", "current", "install_asyncio", "run"]


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.environ.get("CUSTOMLABELS_LIB"),
                 os.path.join(here, "libcustomlabels.so"),
                 ctypes.util.find_library("customlabels")):
        if path:
            try:
                return ctypes.CDLL(path)
            except OSError:
                pass
    raise ImportError("libcustomlabels.so not found: set CUSTOMLABELS_LIB")


_lib = _load()
_lib.custom_labels_labelset_new.restype = ctypes.c_void_p
_lib.custom_labels_labelset_new.argtypes = []
_lib.custom_labels_labelset_set.restype = ctypes.c_int
_lib.custom_labels_labelset_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.c_char_p, ctypes.c_size_t]
_swap = _lib.custom_labels_swap
_swap.restype = ctypes.c_void_p
_swap.argtypes = [ctypes.c_void_p]

# The labels of the running code: a tuple of (key, value) byte pairs, sorted.
_current = contextvars.ContextVar("customlabels", default=())
# Label tuple -> its prepared set (an address); never freed: a thread may have it installed.
_sets = {(): None}
_sets_lock = threading.Lock()


def _encode(v):
    return v if isinstance(v, bytes) else str(v).encode()


def _prepared(pairs):
    s = _sets.get(pairs, 0)
    if s != 0:
        return s
    with _sets_lock:
        s = _sets.get(pairs, 0)
        if s != 0:
            return s
        s = _lib.custom_labels_labelset_new()
        if not s:
            raise MemoryError("custom_labels_labelset_new")
        for k, v in pairs:
            err = _lib.custom_labels_labelset_set(s, k, len(k), v, len(v))
            if err:
                raise OSError(-err, "custom_labels_labelset_set: %s" % os.strerror(-err))
        _sets[pairs] = s
        return s


# (labels before, labels added) -> labels after: a block entered again merges nothing
_merged = {}


def _merge(base, kw):
    key = (base, tuple(kw.items()))
    pairs = _merged.get(key)
    if pairs is not None:
        return pairs
    d = dict(base)
    for k, v in kw.items():
        d[_encode(k)] = _encode(v)
    pairs = _merged[key] = tuple(sorted(d.items()))
    return pairs


def current():
    """The labels in effect here, as a dict of str."""
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in _current.get()}


class labels:
    """with labels(key=value, ...): the block runs with these labels added."""

    __slots__ = ("_add", "_token")

    def __init__(self, **kw):
        self._add = kw

    def __enter__(self):
        pairs = _merge(_current.get(), self._add)
        self._token = _current.set(pairs)
        _swap(_prepared(pairs))
        return self

    def __exit__(self, *exc):
        _current.reset(self._token)
        _swap(_sets[_current.get()])
        return False


def labelled(**kw):
    """Decorator: the function (or coroutine function) runs with labels kw."""
    def wrap(fn):
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*a, **k):
                with labels(**kw):
                    return await fn(*a, **k)
            return run_async

        @functools.wraps(fn)
        def run_sync(*a, **k):
            with labels(**kw):
                return fn(*a, **k)
        return run_sync
    return wrap


class _Step(collections.abc.Coroutine):
    """A task's coroutine: each step publishes the labels of the task's context."""

    __slots__ = ("_coro",)

    def __init__(self, coro):
        self._coro = coro

    def send(self, value):
        _swap(_sets[_current.get()])
        try:
            return self._coro.send(value)
        finally:
            # the thread runs other tasks next: no labels of this one
            _swap(None)

    def throw(self, *args):
        _swap(_sets[_current.get()])
        try:
            return self._coro.throw(*args)
        finally:
            _swap(None)

    def close(self):
        return self._coro.close()

    def __await__(self):
        return self

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def __getattr__(self, name):  # cr_frame, cr_code...: what asyncio's repr looks at
        return getattr(self._coro, name)


def _task_factory(loop, coro, **kw):
    return asyncio.Task(_Step(coro), loop=loop, **kw)


def install_asyncio(loop=None):
    """Tasks created on loop (the running one by default) from now on carry their labels."""
    (loop or asyncio.get_running_loop()).set_task_factory(_task_factory)


def run(main, **kw):
    """asyncio.run(main) with install_asyncio() done before main starts."""
    async def start():
        install_asyncio()
        return await asyncio.get_running_loop().create_task(main)
    return asyncio.run(start(), **kw)

# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Custom labels for Python code, read by labelprof with every CPU sample.

    import customlabels

    with customlabels.labels(tenant="acme", endpoint="/search"):
        handle()

    @customlabels.labelled(job="reindex")
    def reindex(): ...

    customlabels.publish_process({"service.name": "shop"}, ["http.route"])
    with customlabels.span(trace_id, span_id, **{"http.route": "/cart"}):
        handle()

Labels nest (an inner block adds keys and overrides values) and follow the
code: per thread, and per asyncio task across awaits once
customlabels.install_asyncio() (or customlabels.run()) has set the event
loop's task factory. They live in a context variable; the thread publishes
them through libcustomlabels (ctypes, no build step) as prepared label sets,
one per distinct set of labels, installed with a single store
(custom_labels_swap). The first 1024 distinct sets are kept for the life of
the process, so a block entered again costs no allocation; sets past those
(values unique per request, such as ids) are made for the block and freed once
no context holds them. span() publishes the OpenTelemetry thread context of a
request (trace and span ids, attributes), which follows the code the same way.

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

__all__ = ["labels", "labelled", "current", "install_asyncio", "run", "span",
           "publish_process"]


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
_lib.custom_labels_labelset_free.restype = None
_lib.custom_labels_labelset_free.argtypes = [ctypes.c_void_p]
_swap = _lib.custom_labels_swap
_swap.restype = ctypes.c_void_p
_swap.argtypes = [ctypes.c_void_p]


class _Set:
    """A tuple of (key, value) byte pairs, sorted, and its prepared label set."""

    __slots__ = ("pairs", "addr", "owned")
    _free = _lib.custom_labels_labelset_free  # still there while the module is torn down

    def __init__(self, pairs, addr, owned):
        self.pairs = pairs
        self.addr = addr
        self.owned = owned

    def __del__(self):
        # Last reference gone: no context holds it, so no thread has it installed (a
        # block's exit and a task's step install another set before letting it go).
        if self.owned:
            self._free(self.addr)


# The labels of the running code.
_NONE = _Set((), None, False)
_current = contextvars.ContextVar("customlabels", default=_NONE)
# Kept sets by their pairs: never freed, as a thread may have one installed. A set takes
# room for the library's most labels (a few KiB by default): so many and no more.
_KEPT_MAX = 1024
_kept = {}
_kept_lock = threading.Lock()


def _encode(v):
    return v if isinstance(v, bytes) else str(v).encode()


def _prepare(pairs):
    s = _kept.get(pairs)
    if s is not None:
        return s
    addr = _lib.custom_labels_labelset_new()
    if not addr:
        raise MemoryError("custom_labels_labelset_new")
    s = _Set(pairs, addr, True)
    for k, v in pairs:
        err = _lib.custom_labels_labelset_set(addr, k, len(k), v, len(v))
        if err:
            raise OSError(-err, "custom_labels_labelset_set: %s" % os.strerror(-err))
    with _kept_lock:
        if pairs in _kept:
            return _kept[pairs]
        if len(_kept) < _KEPT_MAX:
            s.owned = False
            _kept[pairs] = s
    return s


# (labels before, labels added) -> kept labels after: a block entered again merges
# nothing. Emptied when full: what it holds is only a shortcut.
_MERGED_MAX = 4096
_merged = {}


def _merge(base, kw):
    key = (base.pairs, tuple(kw.items()))
    s = _merged.get(key)
    if s is not None:
        return s
    d = dict(base.pairs)
    for k, v in kw.items():
        d[_encode(k)] = _encode(v)
    s = _prepare(tuple(sorted(d.items())))
    if not s.owned:
        if len(_merged) >= _MERGED_MAX:
            _merged.clear()
        _merged[key] = s
    return s


def current():
    """The labels in effect here, as a dict of str."""
    return {k.decode(errors="replace"): v.decode(errors="replace")
            for k, v in _current.get().pairs}


class labels:
    """with labels(key=value, ...): the block runs with these labels added."""

    __slots__ = ("_add", "_token")

    def __init__(self, **kw):
        self._add = kw

    def __enter__(self):
        s = _merge(_current.get(), self._add)
        self._token = _current.set(s)
        _swap(s.addr)
        return self

    def __exit__(self, *exc):
        # the set before first: the reset may drop this block's set, and free it
        old = self._token.old_value
        _swap((_NONE if old is contextvars.Token.MISSING else old).addr)
        _current.reset(self._token)
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


# OpenTelemetry contexts (OTEP 4947, 4719), beside the labels and independent of them.
_lib.custom_labels_otel_record_init.restype = ctypes.c_int
_lib.custom_labels_otel_record_init.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                ctypes.c_char_p, ctypes.c_ubyte]
_lib.custom_labels_otel_record_add.restype = ctypes.c_int
_lib.custom_labels_otel_record_add.argtypes = [ctypes.c_void_p, ctypes.c_ubyte,
                                               ctypes.c_char_p, ctypes.c_size_t]
_lib.custom_labels_otel_publish.restype = ctypes.c_int
_attach = _lib.custom_labels_otel_attach
_attach.restype = ctypes.c_void_p
_attach.argtypes = [ctypes.c_void_p]
_OTEL_RECORD_SIZE = 640


class _Attr(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


# The record of the running span: (buffer, its address); the buffer lives while a
# context holds it, and is installed only while the code of such a context runs.
_span = contextvars.ContextVar("customlabels_span", default=(None, None))
# Attribute name -> key index, as publish_process() named them.
_key_index = {}
# Whether tasks must install records too: not until a span was made.
_spans_made = False


def publish_process(resource=None, attribute_keys=()):
    """Publishes the OpenTelemetry process context: resource attributes such as
    service.name (a dict of str), and the names of the span attributes that span()
    may carry (their key indices are their positions). Again: replaces it."""
    res = list((resource or {}).items())
    attrs = (_Attr * max(1, len(res)))(*[(_encode(k), _encode(v)) for k, v in res])
    names = [_encode(k) for k in attribute_keys]
    keys = (ctypes.c_char_p * max(1, len(names)))(*names)
    err = _lib.custom_labels_otel_publish(attrs, len(res), keys, len(names))
    if err:
        raise OSError(-err, "custom_labels_otel_publish: %s" % os.strerror(-err))
    _key_index.clear()
    _key_index.update((k, i) for i, k in enumerate(attribute_keys))


def _id(v, size, what):
    b = bytes.fromhex(v) if isinstance(v, str) else bytes(v)
    if len(b) != size:
        raise ValueError(f"{what}: {size} bytes ({2 * size} hex digits), not {len(b)}")
    return b


class span:
    """with span(trace_id, span_id, **attributes): the block runs as that span, in
    the OpenTelemetry thread context (ids as bytes or hex; attribute names as
    publish_process() named them). Unlike labels, ids unique per request cost
    nothing kept: the record is the block's own."""

    __slots__ = ("_record", "_token")

    def __init__(self, trace_id, span_id, trace_flags=1, **attributes):
        global _spans_made
        buf = ctypes.create_string_buffer(_OTEL_RECORD_SIZE)
        addr = ctypes.addressof(buf)
        err = _lib.custom_labels_otel_record_init(addr, _id(trace_id, 16, "trace_id"),
                                                  _id(span_id, 8, "span_id"), trace_flags)
        for k, v in attributes.items():
            if err:
                break
            if k not in _key_index:
                raise ValueError(f"span attribute {k!r}: not named by publish_process()")
            v = _encode(v)
            err = _lib.custom_labels_otel_record_add(addr, _key_index[k], v, len(v))
        if err:
            raise OSError(-err, "custom_labels_otel_record: %s" % os.strerror(-err))
        self._record = (buf, addr)
        _spans_made = True

    def __enter__(self):
        self._token = _span.set(self._record)
        _attach(self._record[1])
        return self

    def __exit__(self, *exc):
        old = self._token.old_value
        _attach(None if old is contextvars.Token.MISSING else old[1])
        _span.reset(self._token)
        return False


class _Step(collections.abc.Coroutine):
    """A task's coroutine: each step publishes the labels (and span) of the task's
    context."""

    __slots__ = ("_coro",)

    def __init__(self, coro):
        self._coro = coro

    def _enter(self):
        _swap(_current.get().addr)
        if _spans_made:
            _attach(_span.get()[1])

    def _leave(self):
        # the thread runs other tasks next: no labels of this one
        _swap(None)
        if _spans_made:
            _attach(None)

    def send(self, value):
        self._enter()
        try:
            return self._coro.send(value)
        finally:
            self._leave()

    def throw(self, *args):
        self._enter()
        try:
            return self._coro.throw(*args)
        finally:
            self._leave()

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

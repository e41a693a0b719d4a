# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks python/customlabels against the thread's installed label set as
libcustomlabels itself reads it (custom_labels_get, and the OpenTelemetry
record of span()): nesting and restore, on threads and in asyncio tasks
interleaved across awaits, with label values
unique per block (past the kept sets: made per block and freed after), and
that such values do not grow the process. Prints one line per failure and
exits 1 if any; else prints "ok" and the figures."""

import asyncio
import ctypes
import os
import sys
import threading

sys.path.insert(0, os.environ["CUSTOMLABELS_PATH"])
import customlabels  # noqa: E402

lib = ctypes.CDLL(os.environ["CUSTOMLABELS_LIB"])
lib.custom_labels_get.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(ctypes.c_size_t)]
lib.custom_labels_otel_current.restype = ctypes.c_void_p
failures = []


def installed_span():
    """The span id (hex) of the calling thread's installed OpenTelemetry record, or None."""
    r = lib.custom_labels_otel_current()
    return ctypes.string_at(r + 16, 8).hex() if r else None


def installed(key):
    """The value of key in the calling thread's installed set, or None."""
    value, size = ctypes.c_void_p(), ctypes.c_size_t()
    if lib.custom_labels_get(key.encode(), len(key), ctypes.byref(value), ctypes.byref(size)):
        return None
    return ctypes.string_at(value, size.value).decode()


def expect(where, key, want):
    got = installed(key)
    if got != want:
        failures.append(f"{where}: {key}={got!r}, want {want!r}")


def nesting(name):
    expect(f"{name} before", "tenant", None)
    with customlabels.labels(tenant="acme", endpoint="/a"):
        expect(f"{name} outer", "tenant", "acme")
        with customlabels.labels(tenant="globex", req=f"{name}-1"):
            expect(f"{name} inner", "tenant", "globex")
            expect(f"{name} inner", "endpoint", "/a")
            expect(f"{name} inner", "req", f"{name}-1")
            if customlabels.current() != {"tenant": "globex", "endpoint": "/a",
                                          "req": f"{name}-1"}:
                failures.append(f"{name}: current() {customlabels.current()}")
        expect(f"{name} after inner", "tenant", "acme")
        expect(f"{name} after inner", "req", None)
    expect(f"{name} after", "tenant", None)


def unique_values(name, n):
    for i in range(n):
        with customlabels.labels(tenant="acme", req=f"{name}-{i}"):
            expect(f"{name} block {i}", "req", f"{name}-{i}")
            if len(failures) > 20:
                return


async def task(i):
    with customlabels.labels(task=str(i)):
        for step in range(30):
            span_id = f"{i:08x}{step:08x}"
            with customlabels.labels(req=f"t{i}-{step}"), \
                    customlabels.span("ab" * 16, span_id, route=f"/t{i}"):
                await asyncio.sleep(0)
                expect(f"task {i} step {step}", "task", str(i))
                expect(f"task {i} step {step}", "req", f"t{i}-{step}")
                if installed_span() != span_id:
                    failures.append(f"task {i} step {step}: span {installed_span()}")
            expect(f"task {i} after step {step}", "req", None)
            if installed_span() is not None:
                failures.append(f"task {i} after step {step}: span {installed_span()}")


async def tasks():
    await asyncio.gather(*(task(i) for i in range(100)))
    expect("loop after the tasks", "task", None)


def rss_kib():
    with open("/proc/self/status") as f:
        return int(f.read().split("VmRSS:")[1].split()[0])


customlabels.publish_process({"service.name": "labels_check"}, ["route"])
nesting("main")
threads = [threading.Thread(target=nesting, args=(f"thread{i}",)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
customlabels.run(tasks())
# the kept sets fill up first; after that, values unique per block must not grow it
unique_values("warm", 5000)
before = rss_kib()
unique_values("unique", 100000)
growth = rss_kib() - before
# a set is a few KiB: 100000 of them kept would be hundreds of MiB
if growth > 16384:
    failures.append(f"100000 blocks of unique values grew the process by {growth} KiB")
for f in failures[:20]:
    print(f)
print("ok" if not failures else f"{len(failures)} failures", f"rss_growth_kib={growth}")
sys.exit(1 if failures else 0)

# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Ground truth for Python frames and labels: threads (or ~100 asyncio tasks)
burn CPU in functions named after their label set, reached through nested
calls, a generator and a C extension call (sorted() calling back into Python).
Each worker switches sets often; the burn function of set N runs only with
labels {"set": "N"}, and in an OpenTelemetry span of its own whose span id
starts with byte N and whose http.route is /set/N, so a sample whose
innermost Python frame is burn_N must carry that label and such a span. Prints "pyburn: ready pid=N" when running; stops after
DURATION seconds.

    pyburn.py threads|asyncio DURATION
"""

import asyncio
import itertools
import os
import sys
import threading
import time

sys.path.insert(0, os.environ["CUSTOMLABELS_PATH"])
import customlabels  # noqa: E402

SETS = 4
SLICE = 0.002
SPAN_COUNTER = itertools.count(1)  # a span id is never all zeros


def spin(until):
    x = 0
    while time.perf_counter() < until:
        x += 1
    return x


def burn_0(until):
    return spin(until)


def burn_1(until):
    return spin(until)


def burn_2(until):
    return sum(spin(until) for _ in range(1))  # through a generator


def burn_3(until):
    # a C function (sorted) calling back into Python
    return sorted([until, until], key=lambda u: spin(u))


BURNS = [burn_0, burn_1, burn_2, burn_3]


def nest(depth, fn, until):
    if depth:
        return nest(depth - 1, fn, until)
    return fn(until)


def request(k, i):
    """The span of a request of set k by worker i: a trace id of its own, a span id
    whose first byte is k (the rest unique), its route /set/k."""
    span_id = bytes([k]) + (i << 32 | next(SPAN_COUNTER)).to_bytes(7, "big")
    return customlabels.span(os.urandom(16), span_id, **{"http.route": f"/set/{k}"})


def work(k, i):
    with customlabels.labels(set=str(k)), request(k, i):
        nest(20, BURNS[k], time.perf_counter() + SLICE)


def thread_main(i, end):
    k = i
    while time.time() < end:
        work(k % SETS, i)
        k += 1


async def task_main(i, end):
    k = i
    while time.time() < end:
        with customlabels.labels(set=str(k % SETS)), request(k % SETS, i):
            nest(20, BURNS[k % SETS], time.perf_counter() + SLICE / 4)
            await asyncio.sleep(0)
            nest(20, BURNS[k % SETS], time.perf_counter() + SLICE / 4)
        k += 1


async def amain(end):
    await asyncio.gather(*(asyncio.get_running_loop().create_task(task_main(i, end))
                           for i in range(100)))


def main():
    mode, duration = sys.argv[1], float(sys.argv[2])
    customlabels.publish_process({"service.name": "pyburn"}, ["http.route"])
    print(f"pyburn: ready pid={os.getpid()}", file=sys.stderr, flush=True)
    end = time.time() + duration
    if mode == "threads":
        ts = [threading.Thread(target=thread_main, args=(i, end)) for i in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    else:
        customlabels.run(amain(end))


main()

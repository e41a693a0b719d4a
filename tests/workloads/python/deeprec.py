# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A recursion of DEPTH Python frames from the module's top level, burning CPU
at its bottom, for the whole-stack tests of deep stacks (tests/e2e/test_deep.py):

    <module> -> level_0 -> level_1 -> ... -> level_9 -> level_0 -> ... -> burn

Level i runs in level_{i % 10}, so a frame missing or out of order shows in the
names. Every call into a level that is a multiple of BRIDGE goes through
functools.reduce, a C function calling back into Python: the interpreter's
native frames stand between the two levels. Prints "deeprec.py: ready" on
stderr once the burn runs; stops when stdin closes.

    deeprec.py DEPTH [BRIDGE]   (BRIDGE: 100 by default)
"""

import functools
import sys
import threading

depth = int(sys.argv[1])
BRIDGE = int(sys.argv[2]) if len(sys.argv) > 2 else 100
stop = False


def burn(x):
    sys.stderr.write("deeprec.py: ready\n")
    sys.stderr.flush()
    while not stop:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


# level_0 .. level_9, each calling the next (level_9 the first): one function
# per name, compiled from this file so that its frames name it.
LEVEL = """
def level_{k}(i, x):
    if i + 1 == depth:
        return burn(x) + i
    if (i + 1) % BRIDGE == 0:
        return functools.reduce(level_{n}, [x], i + 1) + i
    return level_{n}(i + 1, x ^ i) + i
"""
exec(compile("".join(LEVEL.format(k=k, n=(k + 1) % 10) for k in range(10)), __file__, "exec"))


def watch_stdin():
    global stop
    sys.stdin.buffer.read()
    stop = True


# room for the recursion above what the interpreter already runs
sys.setrecursionlimit(depth + 1000)
threading.Thread(target=watch_stdin, daemon=True).start()
print(level_0(0, depth))  # noqa: F821 (defined by the exec above)

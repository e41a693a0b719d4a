# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Ground truth for code objects freed and their addresses reused: generation N
compiles a function gen_N of its own, burns CPU in it for a few ms under the
label gen=N, then drops it, so that the next generation's code objects take
the addresses of this one's. A sample whose innermost Python frame is named
gen_M must carry gen=M. Prints "codechurn: ready pid=N"; stops after DURATION
seconds.

    codechurn.py DURATION
"""

import itertools
import os
import sys
import time

sys.path.insert(0, os.environ["CUSTOMLABELS_PATH"])
import customlabels  # noqa: E402

SLICE = 0.003


def main():
    end = time.time() + float(sys.argv[1])
    print(f"codechurn: ready pid={os.getpid()}", file=sys.stderr, flush=True)
    for n in itertools.count():
        if time.time() >= end:
            break
        src = (f"def gen_{n}(until):\n"
               f"    while time.perf_counter() < until:\n"
               f"        pass\n")
        scope = {"time": time}
        exec(compile(src, f"<generation {n}>", "exec"), scope)
        with customlabels.labels(gen=str(n)):
            scope[f"gen_{n}"](time.perf_counter() + SLICE)
        del scope


main()

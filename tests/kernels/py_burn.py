# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Python check of tests/kernels/smoke: the main thread burns in burn_main under
# outer_main, a thread in burn_a under outer_a, for as long as it runs. Runs under
# `python3.11 -S` with Debian's minimal standard library (the guests have no more).
import sys
import threading


def burn_a():
    while True:
        pass


def outer_a():
    burn_a()


def burn_main():
    while True:
        pass


def outer_main():
    burn_main()


threading.Thread(target=outer_a, daemon=True).start()
print("ready", file=sys.stderr, flush=True)
outer_main()

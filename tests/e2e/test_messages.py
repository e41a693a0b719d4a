"""Messages that point the right way: a kernel thread is said to be one
(kernel stacks, no user stacks or labels) rather than a process without a
label library, and a label selection that matches nothing says so rather
than pointing at `labelprof inspect`; a count agrees with its noun."""

import json
import re
import subprocess

import pytest

from conftest import LABELPROF, record
from test_agent import agent
from test_top import demo  # noqa: F401 (a fixture)

KTHREADD = 2  # the parent of every kernel thread


def run(*args, timeout=120):
    return subprocess.run([str(LABELPROF), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def kernel_threads():
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True,
                         check=True).stdout
    return [int(p) for p, pp in (line.split() for line in out.splitlines()) if pp == "2"]


def test_inspect_kernel_thread():
    proc = run("inspect", KTHREADD)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"pid {KTHREADD}: kernel thread: "), proc.stdout
    assert "kernel stacks" in proc.stdout and "libcustomlabels" not in proc.stdout, proc.stdout


def test_labels_kernel_thread():
    proc = run("labels", KTHREADD)
    assert proc.returncode == 1, proc.stderr
    assert f"pid {KTHREADD} is a kernel thread" in proc.stderr, proc.stderr
    assert "libcustomlabels" not in proc.stderr, proc.stderr


def test_record_kernel_thread(tmp_path):
    rec = record(tmp_path, "-p", KTHREADD, duration=1, timeout=60)
    assert rec.returncode == 0, rec.describe()
    assert (f"labelprof: pid {KTHREADD} is a kernel thread: it has kernel stacks only, no user "
            "stacks and no labels") in rec.stderr, rec.stderr
    assert "publishes no labels" not in rec.stderr, rec.stderr


def test_record_kernel_threads_kernel_stacks(tmp_path):
    """-p of kernel threads samples them: kernel frames only."""
    pids = kernel_threads()[:1000]
    rec = record(tmp_path, "-p", ",".join(map(str, pids)), duration=2, timeout=60)
    assert rec.returncode == 0, rec.describe()
    samples = rec.profile.samples
    if not samples:
        pytest.skip("no kernel thread ran while sampled")
    assert {s["pid"] for s in samples} <= set(pids)
    assert all(f.get("kernel") for s in samples for f in s["frames"]), "a user frame"
    assert any(s["frames"] for s in samples), "no kernel stack"


@pytest.mark.parametrize("flags,said", [
    (["--labels", "nosuchkey"], "--labels nosuchkey"),
    (["--drop-labels", "*"], "--drop-labels *"),
])
def test_convert_selection_matching_nothing(demo, tmp_path, flags, said):  # noqa: F811
    rec = record(tmp_path, "-p", demo.pid, duration=2)
    assert rec.returncode == 0, rec.describe()
    proc = run("convert", rec.out, "--format", "json", *flags)
    assert proc.returncode == 0, proc.stderr
    line = f"labelprof: {said} matched no label key of {rec.out}; its keys: "
    assert line in proc.stderr, proc.stderr
    keys = proc.stderr.split(line, 1)[1].splitlines()[0].split(", ")
    assert "tenant" in keys, keys
    assert not any(s.get("labels") for s in json.loads(proc.stdout)["samples"])


def test_counts_agree_with_their_nouns(tmp_path):
    """One interval is "1 interval", not "1 intervals"."""
    with agent(tmp_path, f"interval = 1h\noutput_dir = {tmp_path}/out\n") as a:
        assert a.stop() == 0, a.stderr()
    assert re.search(r"stopped: 1 interval, \d+ samples?, 0 sent, 0 failed sends, "
                     r"0 intervals dropped", a.stderr()), a.stderr()

"""Process turnover during a recording: a thousand short-lived labelled
children, and one process that execs back and forth between labelled programs
(v1 and v0 ABI in turn) and an unlabelled one under the same pid."""

import collections
import os
import re
import subprocess
import time

import pytest

from conftest import (ATTRIBUTION_MIN, CAPTURE_MIN, check_exit, count, flags_of, in_function,
                      label_set, labels_of, load_json, measure, ready_pid, recording,
                      started, workload)

CHILDREN = 1000
CHILD_BURN_US = 3000
# A new labelled image sleeps this long before it burns: the time labelprof
# gets to inspect a process after exec before its samples must carry labels.
GRACE_MS = 20
# Share of the children that must show up with their own labels at least once.
CHILDREN_SEEN_MIN = 0.8
# A child's samples taken before labelprof has seen its exec and its label
# library being mapped cannot carry labels (no recipe yet). labelprof runs at a
# real-time priority here (realtime()): at a normal one, on CPUs shared with
# other work, it waits for them as long as that work decides (93.6 % labelled
# with -a at a load average of 9), which says nothing of labelprof. What is
# left is its own handling and its follow-up inspections while the child's
# loader relocates the library (5, 10, 20 ms after the mapping, user/registry/registry.c)
# against the grace, the loaders themselves waiting for the CPUs the children
# oversubscribe: 99.4-100 % measured with -a at a load average of 8. Wrong
# labels stay forbidden outright.
SHORT_LIVED_ATTRIBUTION_MIN = 0.95
PROBLEM_FLAGS = {"read_fault", "malformed", "truncated"}
# Samples are resolved after they are taken, against the memory map read at
# the exec and again when code is mapped. Left without a module: samples
# labelprof handles only once their image is gone (0-0.04 % measured; 10-17 %
# when a refresh could read the next image, or when the unwind tables were
# built on the thread that reads the maps; 0.1-0.3 % in the sanitized build).
UNRESOLVED_MAX = 0.05


def realtime(pid):
    """labelprof's threads first in line for a CPU; what they start runs at a normal priority."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setscheduler(int(tid), os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                              os.sched_param(1))


def spawn_argv(report):
    return [workload("churn"), "spawn", "--count", CHILDREN, "--parallel", 8,
            "--burn-us", CHILD_BURN_US, "--delay-ms", GRACE_MS, "--output", report]


@pytest.mark.parametrize("how", ["command", "all"])
def test_short_lived_children(request, tmp_path, how):
    """Every sample of a child carries that child's labels or none; its labelled
    CPU is captured and labelled."""
    report_path = tmp_path / "churn.json"
    if how == "command":
        # labelprof follows the command's children.
        with recording(tmp_path, "--", *spawn_argv(report_path)) as rec:
            realtime(rec.proc.pid)
            assert rec.wait(300), "the churn command did not finish"
        assert rec.returncode == 0, rec.describe()
    else:
        with recording(tmp_path, "-a") as rec:
            realtime(rec.proc.pid)
            churn = subprocess.run([str(a) for a in spawn_argv(report_path)],
                                   stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        assert churn.returncode == 0, churn.stderr.decode(errors="replace")
    report = load_json(report_path)
    assert (report["started"], report["failed"], report["unreported"]) == (CHILDREN, 0, 0)

    # A pid may be reused by a later child: any of its owners' labels will do.
    own = {}
    for c in report["children"]:
        labels = {"role": "churn-child", "seq": str(c["seq"]), "pid": str(c["pid"])}
        own.setdefault(c["pid"], set()).add(label_set(labels))
    samples = rec.profile.of_pids(own)
    wrong = [(s["pid"], s.get("labels")) for s in samples
             if labels_of(s) and labels_of(s) not in own[s["pid"]]]
    burn = [s for s in samples if in_function(s, "burn_child")]
    labelled = [s for s in burn if labels_of(s) in own[s["pid"]]]
    seen = {s["pid"] for s in labelled}
    expected = rec.profile.frequency * report["child_burn_ns"] / 1e9
    measure(request, f"{count(burn)} samples in burn_child ({count(burn) / expected:.1%} of "
                     f"{expected:.0f} expected), {count(labelled)} labelled, "
                     f"{len(seen)}/{CHILDREN} children seen with their labels")

    assert not wrong, f"samples with another process's labels: {wrong[:5]}"
    assert count(burn) >= CAPTURE_MIN * expected, (
        f"{count(burn)} samples in burn_child, expected about {expected:.0f}; "
        f"{len(samples)} samples of the children in all; counters {rec.profile.counters}")
    assert count(labelled) >= SHORT_LIVED_ATTRIBUTION_MIN * count(burn), (
        f"{count(labelled)}/{count(burn)} samples in burn_child carry the child's labels")
    assert len(seen) >= CHILDREN_SEEN_MIN * CHILDREN


def cycle_labels_ok(labels):
    """phase=labelled, cycle=N, abi=v1 on even cycles and v0 on odd ones."""
    d = dict(labels)
    if set(d) != {b"phase", b"cycle", b"abi"} or d[b"phase"] != b"labelled":
        return False
    return d[b"cycle"].isdigit() and d[b"abi"] == (b"v0" if int(d[b"cycle"]) % 2 else b"v1")


def exec_delays(rec):
    """record -v's count of execs and their inspection delays, in ms: (n, mean, max)."""
    m = re.search(r"labelprof: (\d+) execs?, each inspected ([\d.]+) ms after it on average, "
                  r"([\d.]+) ms at most", rec.stderr)
    assert m, f"no exec delays in record -v's summary: {rec.describe()}"
    return int(m[1]), float(m[2]), float(m[3])


def check_exec_cycle(request, rec, pid):
    samples = rec.profile.of_pids(pid)
    plain = [s for s in samples if in_function(s, "burn_plain")]
    labelled = [s for s in samples if in_function(s, "burn_labelled")]
    stale = [(s.get("labels"), s.get("flags")) for s in plain
             if labels_of(s) or flags_of(s) & PROBLEM_FLAGS]
    wrong = [s.get("labels") for s in labelled
             if labels_of(s) and not cycle_labels_ok(labels_of(s))]
    right = [s for s in labelled if cycle_labels_ok(labels_of(s))]
    abis = {dict(labels_of(s))[b"abi"] for s in right}
    user = [s for s in samples if any(not f.get("kernel") for f in s.get("frames", []))]
    unresolved = [s for s in user
                  if next(f for f in s["frames"] if not f.get("kernel")).get("module") is None]
    execs, delay_mean, delay_max = exec_delays(rec)
    missed = collections.Counter()
    for s in labelled:
        if s not in right:
            missed.update({f: s["count"] for f in s.get("flags") or ["none"]})
    measure(request, f"{count(plain)} unlabelled-image samples, {count(right)}/{count(labelled)} "
                     f"labelled-image samples labelled, {count(unresolved)}/{count(user)} "
                     f"user stacks whose first frame is in no module; {execs} execs inspected "
                     f"{delay_mean:.1f} ms after on average, {delay_max:.1f} ms at most"
                     + (f"; flags of the labelled images' unlabelled samples: {dict(missed)}"
                        if missed else ""))

    assert count(plain) > 0 and count(labelled) > 0, "no samples in burn_plain/burn_labelled"
    assert not stale, f"the unlabelled program was read with a stale recipe: {stale[:5]}"
    assert not wrong, f"wrong labels after exec: {wrong[:5]}"
    assert count(right) >= ATTRIBUTION_MIN * count(labelled), (
        f"{count(right)}/{count(labelled)} samples of labelled images carry their labels")
    assert abis == {b"v0", b"v1"}, f"labels seen only from ABI {abis}"
    assert count(unresolved) <= UNRESOLVED_MAX * count(user), (
        f"{count(unresolved)}/{count(user)} user stacks resolve to no module")


# The exec cycles hold labelprof to the same grace as the children: it runs at
# a real-time priority there too (measured without: 94.0 % at a load average of 10).


def test_exec_cycle_pid(request, tmp_path):
    """-p PID follows the process through exec."""
    argv = [workload("churn"), "exec-cycle", "--cycles", 0, "--burn-us", 100000,
            "--delay-ms", GRACE_MS, "--wait-stdin"]
    with started(argv) as wl:
        with recording(tmp_path, "-v", "-p", wl.pid) as rec:
            realtime(rec.proc.pid)
            time.sleep(3)
    check_exit(wl)
    assert rec.returncode == 0, rec.describe()
    check_exec_cycle(request, rec, wl.pid)


def test_exec_cycle_command(request, tmp_path):
    argv = [workload("churn"), "exec-cycle", "--cycles", 8, "--burn-us", 100000,
            "--delay-ms", GRACE_MS]
    with recording(tmp_path, "-v", "--", *argv) as rec:
        realtime(rec.proc.pid)
        assert rec.wait(300), "the churn command did not finish"
    assert rec.returncode == 0, rec.describe()
    check_exec_cycle(request, rec, ready_pid(rec.stderr))

"""The sampler's own switches, each loaded into the kernel for real: the cgroup
filter, load-time label limits, labels off, privileges, and ring-buffer
overflow accounting."""

import contextlib
import fcntl
import os
import pathlib
import re
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import (CAPTURE_MIN, FREQ, LABELPROF, count, flags_of, in_function, labels_of,
                      load_json, measure, overlap_fraction, record, recording, started, workload)

BURN_SETS = [f"burn_set_{k}" for k in range(8)]


def groundtruth(report, *extra):
    return [workload("groundtruth-v1-lib"), "--threads", "2", "--interval", "1000,5000",
            "--output", report, "--wait-stdin", *extra]


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return pathlib.Path(mnt)
    pytest.fail("no cgroup v2 hierarchy is mounted")


@contextlib.contextmanager
def cgroup(name):
    path = cgroup2_root() / name
    path.mkdir()
    try:
        yield path
    finally:
        # move whatever is left back to the root before removing the group
        for pid in (path / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (path.parent / "cgroup.procs").write_text(pid)
        path.rmdir()


def test_cgroup_filter(tmp_path):
    """Only processes in the cgroup are sampled, and they keep their labels."""
    with cgroup(f"labelprof-test-{os.getpid()}") as cg, \
            started(groundtruth(tmp_path / "in.json")) as inside, \
            started(groundtruth(tmp_path / "out.json")) as outside:
        (cg / "cgroup.procs").write_text(str(inside.pid))
        rec = record(tmp_path, "--cgroup", cg, duration=2)
    prof = rec.profile
    pids = {s["pid"] for s in prof.samples}
    assert inside.pid in pids, f"nothing sampled in the cgroup: {rec.stderr}"
    assert outside.pid not in pids, "a process outside the cgroup was sampled"
    assert pids <= {inside.pid}, f"other processes sampled: {pids - {inside.pid}}"
    labelled = [s for s in prof.samples if labels_of(s)]
    assert count(labelled) > 0.5 * count(prof.samples)
    assert prof.counters["filtered"] > 0


def test_label_limits_truncate(tmp_path):
    """Lower limits are applied in BPF: nothing longer is copied, and the
    truncation is flagged and counted."""
    with started(groundtruth(tmp_path / "gt.json")) as wl:
        rec = record(tmp_path, "-p", wl.pid, "--max-labels", 2, "--max-key-len", 4,
                     "--max-value-len", 5, duration=2)
    prof = rec.profile
    labelled = [s for s in prof.samples if labels_of(s)]
    assert labelled
    for s in labelled:
        labels = labels_of(s)
        assert len(labels) <= 2
        assert all(len(k) <= 4 and len(v) <= 5 for k, v in labels)
    truncated = [s for s in labelled if "truncated" in flags_of(s)]
    assert truncated, "no sample flagged truncated"
    assert prof.counters["truncations"] >= count(truncated)


def test_large_limits_load(tmp_path):
    """The largest documented configuration passes the verifier and reads labels."""
    with started(groundtruth(tmp_path / "gt.json")) as wl:
        rec = record(tmp_path, "-p", wl.pid, "--max-labels", 32, "--max-key-len", 256,
                     "--max-value-len", 512, duration=1)
    assert any(labels_of(s) for s in rec.profile.samples)


def test_limits_beyond_budget_are_refused(tmp_path):
    rec = record(tmp_path, "-a", "--max-labels", 64, "--max-key-len", 1024,
                 "--max-value-len", 4096, duration=1, timeout=30)
    # a usage error naming a flag, before sampling (tests/e2e/test_options.py)
    assert rec.returncode == 2, rec.describe()
    assert "--max-value-len: labels x (4 + key + value) must be at most" in rec.stderr
    assert not rec.out.exists()


def test_labels_off(tmp_path):
    """--no-labels: stacks only, no label ever read."""
    with started(groundtruth(tmp_path / "gt.json")) as wl:
        rec = record(tmp_path, "-p", wl.pid, "--no-labels", duration=1)
    prof = rec.profile
    assert count(prof.samples) > 0
    assert not any(labels_of(s) for s in prof.samples)
    assert prof.counters["samples_with_labels"] == 0
    assert any(in_function(s, fn) for s in prof.samples for fn in BURN_SETS)


def test_unprivileged_user_is_told_what_is_missing():
    # a destination the user can write (pytest's tmp_path is under a root-only directory):
    # only the privileges are missing
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        os.chmod(d, 0o777)
        out = pathlib.Path(d) / "p.json"
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               "--inh-caps=-all", str(LABELPROF), "record", "-a", "-d", "1",
                               "-o", str(out)], capture_output=True, text=True, timeout=30)
        assert proc.returncode != 0
        assert "CAP_BPF" in proc.stderr and "privileges" in proc.stderr, proc.stderr
        assert not out.exists()


def test_ringbuf_overflow_is_counted_exactly(tmp_path):
    """A tiny ring buffer at a high rate whose reader cannot run (labelprof is
    stopped for half a second, its reader thread too) loses samples: every
    program run is either received or counted as dropped, and the summary
    says so."""
    with started(groundtruth(tmp_path / "gt.json")) as wl:
        with recording(tmp_path, "-p", wl.pid, "--ringbuf-size", 4096, freq=20000) as rec:
            time.sleep(0.3)
            os.kill(rec.proc.pid, signal.SIGSTOP)
            time.sleep(0.5)
            os.kill(rec.proc.pid, signal.SIGCONT)
            time.sleep(0.3)
    assert rec.returncode == 0, rec.describe()
    c = rec.profile.counters
    assert c["ringbuf_drops"] > 0, c
    assert c["samples_received"] + c["ringbuf_drops"] == c["samples"], c
    assert c["records_rejected"] == 0, c
    assert f"{c['ringbuf_drops']} dropped" in rec.stderr, rec.stderr


def full_pipe():
    """A pipe whose buffer is full: the next write to it blocks until it is read."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(w, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(w, b"x" * 4096)
    os.set_blocking(w, True)
    return r, w


def test_stalled_main_loop_drops_no_samples(request, tmp_path):
    """The ring buffer is drained by its own reader thread while labelprof's
    main loop is stalled for longer than a small ring lasts: here it writes its
    "sampling" line to a stderr pipe nobody reads for a few seconds (so
    sampling runs all that time and the -d 1 recording ends once it can).
    Every sample taken is received, none is dropped."""
    ring = 32768
    # a record is at least a struct lp_sample (64 bytes) and the ring's 8-byte header
    ring_records = ring // 72
    r, w = full_pipe()
    out = tmp_path / "stalled.json"
    cmd = [LABELPROF, "record", "-F", FREQ, "--format", "json", "-o", out, "-d", 1,
           "--ringbuf-size", ring]
    with started(groundtruth(tmp_path / "gt.json")) as wl:
        proc = subprocess.Popen([str(a) for a in cmd + ["-p", wl.pid]],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=w)
        os.close(w)
        time.sleep(4)
        with os.fdopen(r, "rb") as f:
            stderr = f.read().lstrip(b"x").decode(errors="replace")
        assert proc.wait(timeout=60) == 0, stderr
    report = load_json(tmp_path / "gt.json")
    doc = load_json(out)
    c = doc["counters"]
    assert "labelprof: sampling" in stderr, stderr
    assert c["samples"] > ring_records, (
        f"{c['samples']} samples: too few to fill a {ring}-byte ring, the stall proved nothing")
    assert c["ringbuf_drops"] == 0, c
    assert c["samples_received"] == c["samples"], c
    assert c["records_rejected"] == 0, c
    start, end = doc["start_time_unix_ns"], doc["start_time_unix_ns"] + doc["duration_ns"]
    cpu_ns = sum(ns * overlap_fraction(t0, t1, start, end)
                 for _tid, _set, t0, t1, ns in report["intervals"])
    expected = FREQ * cpu_ns / 1e9
    measure(request, f"{c['samples_received']} samples received of {c['samples']}, "
                     f"{c['ringbuf_drops']} dropped, about {expected:.0f} expected")
    assert c["samples_received"] >= CAPTURE_MIN * expected, (
        f"{c['samples_received']} samples, expected about {expected:.0f}: {c}")


def inspections(rec):
    """The number of process inspections `record -v` reports."""
    found = re.search(r"labelprof: (\d+) process inspections", rec.stderr)
    assert found, rec.stderr
    return int(found.group(1))


def test_unlabelled_process_is_not_inspected_again(request, tmp_path):
    """A busy process without labels is inspected as often as an idle one
    (at the start and at the follow-ups while its libraries may load): its
    samples do not ask for more (LP_RECIPE_QUIET), only new code would."""
    counts = {}
    for kind, code in (("busy", "while True: pass"), ("idle", "import time; time.sleep(60)")):
        proc = subprocess.Popen(["/usr/bin/python3", "-c", code])
        try:
            rec = record(tmp_path, "-p", proc.pid, "-v", duration=5)
        finally:
            proc.kill()
            proc.wait()
        assert rec.returncode == 0, rec.describe()
        counts[kind] = (inspections(rec), count(rec.profile.of_pids(proc.pid)))
    measure(request, f"inspections (samples): busy {counts['busy']}, idle {counts['idle']}")
    assert counts["busy"][1] >= CAPTURE_MIN * FREQ * 5 * 0.5, counts
    # the follow-ups at 5, 10, 20 ... ms may fall either side of the end
    assert abs(counts["busy"][0] - counts["idle"][0]) <= 1, counts


def test_zombie_target_ends_recording(tmp_path):
    """A -p target that exits and is never reaped stays a zombie: labelprof
    still stops, and writes what it sampled."""
    child = subprocess.Popen(groundtruth(tmp_path / "gt.json"), stdin=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    try:
        with recording(tmp_path, "-p", child.pid) as rec:
            time.sleep(1)
            child.stdin.close()
            stopped = rec.wait(timeout=30)
            state = process_state(child.pid)
        assert state == "Z", f"the target should be an unreaped zombie, is {state!r}"
        assert stopped, "kept recording after the target died"
        assert any(labels_of(s) for s in rec.profile.of_pids(child.pid))
    finally:
        child.wait()


def process_state(pid):
    """The state letter of /proc/PID/stat (after the parenthesised comm)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def test_all_with_command_samples_everything(tmp_path):
    """-a -- COMMAND samples the whole machine until the command exits, as perf does."""
    with started(groundtruth(tmp_path / "gt.json")) as other:
        rec = record(tmp_path, "-a", "--", "sleep", "1.5", timeout=60)
    prof = rec.profile
    assert other.pid in {s["pid"] for s in prof.samples}
    assert prof.duration_ns < 10e9

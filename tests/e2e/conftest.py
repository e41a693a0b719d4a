"""Shared pieces of labelprof's end-to-end tests: where the binaries are,
starting workloads and labelprof, and reading labelprof's JSON profiles.

The workloads (tests/workloads) say what a correct profile contains; the
tests compare. Label bytes are compared as bytes: JSON strings are decoded
with surrogateescape, the convention both labelprof and the workloads use for
bytes that are not UTF-8.
"""

import contextlib
import itertools
import json
import os
import pathlib
import re
import select
import signal
import subprocess
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
OUTPUT = pathlib.Path(os.environ.get("OUTPUT", REPO / ".output")).resolve()
LABELPROF = OUTPUT / "labelprof"
WORKLOADS = OUTPUT / "workloads"

FREQ = 999
# Share of samples that must carry exactly the labels that were set (docs/design.md section 6).
ATTRIBUTION_MIN = 0.995
# Samples captured vs frequency x CPU seconds. The budget is 99 %; the
# benchmarks measure it, the tests only catch gross losses.
CAPTURE_MIN = 0.90

_measurements = []
_unique = itertools.count()


def workload(name):
    path = WORKLOADS / name
    assert path.is_file(), f"{path} is missing: build it with 'make OUTPUT={OUTPUT} test-build'"
    return str(path)


def as_bytes(s):
    """A string from labelprof's or a workload's JSON, back to its bytes."""
    return s.encode("utf-8", "surrogateescape")


def _no_duplicate_keys(pairs):
    obj = dict(pairs)
    assert len(obj) == len(pairs), f"JSON object repeats keys: {[k for k, _ in pairs]!r}"
    return obj


def load_json(path):
    """Parses a JSON file, failing on repeated object keys (a set has unique keys)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return json.load(f, object_pairs_hook=_no_duplicate_keys)


def label_set(labels):
    """A JSON labels object as a frozenset of (key, value) byte pairs."""
    return frozenset((as_bytes(k), as_bytes(v)) for k, v in labels.items())


def labels_of(sample):
    return label_set(sample.get("labels") or {})


def flags_of(sample):
    return set(sample.get("flags") or [])


def user_functions(sample):
    return [f.get("function") for f in sample["frames"] if not f.get("kernel")]


def in_function(sample, name):
    """Whether the sample's user stack passes through function name."""
    return name in user_functions(sample)


def which_function(sample, names):
    """The one function of names on the sample's user stack, or None."""
    found = set(user_functions(sample)) & set(names)
    assert len(found) <= 1, f"one stack in several burn functions {found}: {sample}"
    return found.pop() if found else None


def user_frames(sample):
    return [f for f in sample["frames"] if not f.get("kernel")]


def in_kernel(sample):
    return any(f.get("kernel") for f in sample["frames"])


def names(frames):
    return [f.get("function") for f in frames]


def show(frames, limit=8):
    """A stack for a failure message: function+offset (address), leaf first."""
    out = [f"{f.get('function')}+{f.get('offset')} ({f['address']})" for f in frames[:limit]]
    return " <- ".join(out) + (f" <- ... ({len(frames)} frames)" if len(frames) > limit else "")


def max_stack():
    """The kernel's frame limit for stacks (perf_event_max_stack): labelprof's
    kernel stacks, perf's stacks, and user stacks taken by bpf_get_stack."""
    with open("/proc/sys/kernel/perf_event_max_stack") as f:
        return int(f.read())


def max_user_stack():
    """The words of a user stack that labelprof's walks in BPF store, frame
    records and CFI alike (LP_MAX_USTACK_WORDS)."""
    header = (REPO / "bpf" / "labelprof.h").read_text()
    return int(re.search(r"#define LP_MAX_USTACK_WORDS (\d+)", header).group(1))


def count(samples):
    return sum(s["count"] for s in samples)


def measure(request, text):
    """Reports a measured figure in the terminal summary, whatever the outcome."""
    _measurements.append(f"{request.node.nodeid}: {text}")
    print(text)


def pytest_terminal_summary(terminalreporter):
    if _measurements:
        terminalreporter.section("labelprof end-to-end measurements")
        for line in _measurements:
            terminalreporter.write_line(line)


class Profile:
    def __init__(self, doc):
        assert doc.get("format") == "labelprof-json", f"not a labelprof JSON profile: {doc!r:.200}"
        assert doc.get("version") == 1, f"unexpected version {doc.get('version')}"
        self.doc = doc
        self.samples = doc["samples"]
        self.counters = doc["counters"]
        self.frequency = doc["frequency_hz"]
        self.start_ns = doc["start_time_unix_ns"]
        self.duration_ns = doc["duration_ns"]

    def of_pids(self, pids):
        pids = {pids} if isinstance(pids, int) else set(pids)
        return [s for s in self.samples if s["pid"] in pids]


class Recording:
    """One labelprof run: its command line, exit status, stderr and profile."""

    def __init__(self, cmd, out):
        self.cmd = cmd
        self.out = out
        self.returncode = None
        self.stderr = ""
        self.proc = None
        self._profile = None

    def finish(self, returncode, stderr):
        self.returncode = returncode
        self.stderr = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr

    def wait(self, timeout):
        """For a background recording: whether labelprof stopped by itself in time."""
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def describe(self):
        return f"`{' '.join(map(str, self.cmd))}` exited {self.returncode}: {self.stderr.strip()}"

    @property
    def profile(self):
        if self._profile is None:
            assert self.returncode == 0, self.describe()
            assert self.out.is_file(), f"no profile written: {self.describe()}"
            self._profile = Profile(load_json(self.out))
        return self._profile


def _labelprof_cmd(tmp_path, args, duration, freq, out=None):
    out = out or tmp_path / f"profile-{next(_unique)}.json"
    assert LABELPROF.is_file(), f"{LABELPROF} is missing: build it with 'make OUTPUT={OUTPUT}'"
    cmd = [str(LABELPROF), "record", "-F", str(freq), "--format", "json", "-o", str(out)]
    if duration:
        cmd += ["-d", str(duration)]
    # Target options last: they may end with "-- COMMAND ARGS".
    return cmd + [str(a) for a in args], out


def record(tmp_path, *args, duration=None, freq=FREQ, timeout=180, out=None):
    """Runs `labelprof record ... ARGS` to the end (-d, or until its command exits)."""
    cmd, out = _labelprof_cmd(tmp_path, args, duration, freq, out)
    rec = Recording(cmd, out)
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)
    rec.finish(proc.returncode, proc.stderr)
    return rec


@contextlib.contextmanager
def recording(tmp_path, *args, freq=FREQ, timeout=60):
    """labelprof record ARGS in the background, sampling once the block starts;
    stopped with SIGINT when the block ends. Yields the Recording."""
    cmd, out = _labelprof_cmd(tmp_path, args, None, freq)
    rec = Recording(cmd, out)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    rec.proc = proc
    seen = b""
    try:
        # labelprof says so on stderr once it samples (after its process scan).
        deadline = time.monotonic() + timeout
        fd = proc.stderr.fileno()
        while b"labelprof: sampling" not in seen:
            left = deadline - time.monotonic()
            readable, _, _ = select.select([fd], [], [], max(left, 0))
            chunk = os.read(fd, 4096) if readable else b""
            if not chunk:
                proc.kill()
                _, err = proc.communicate()
                rec.finish(proc.returncode, seen + err)
                pytest.fail(f"labelprof never started sampling: {rec.describe()}")
            seen += chunk
        yield rec
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        rec.finish(proc.returncode, seen + err)


class Workload:
    def __init__(self, proc):
        self.proc = proc
        self.pid = proc.pid
        self.stderr = ""

    def stop(self, timeout=60):
        """Closes its stdin (workloads run with -w stop then) and waits for it."""
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextlib.contextmanager
def started(argv, ready_timeout=30, stop_timeout=60):
    """Starts a workload and waits for its "ready" line on stderr. On exit,
    closes its stdin (workloads run with -w stop then) and waits for it.
    It is reaped as soon as it exits, as a service's parent would: a zombie
    left around is not what the tests are about."""
    proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    threading.Thread(target=proc.wait, daemon=True).start()
    wl = Workload(proc)
    seen = b""
    try:
        deadline = time.monotonic() + ready_timeout
        fd = proc.stderr.fileno()
        while b"ready" not in seen:
            left = deadline - time.monotonic()
            readable, _, _ = select.select([fd], [], [], max(left, 0))
            chunk = os.read(fd, 4096) if readable else b""
            if not chunk:
                pytest.fail(f"{argv[0]} did not get ready: {seen.decode(errors='replace')}")
            seen += chunk
        yield wl
    finally:
        wl.stop(stop_timeout)
        wl.stderr = (seen + proc.stderr.read()).decode("utf-8", "replace")
        proc.stderr.close()


def ready_pid(stderr):
    """The pid in a workload's "NAME: ready pid=N" line (e.g. in labelprof's stderr,
    which a profiled command inherits)."""
    m = re.search(r"^\S+: ready pid=(\d+)$", stderr, re.M)
    assert m, f"no ready line in {stderr!r}"
    return int(m.group(1))


def check_exit(wl):
    assert wl.proc.returncode == 0, f"workload exited {wl.proc.returncode}: {wl.stderr}"


def overlap_fraction(start, end, window_start, window_end):
    """How much of [start, end] lies inside the window (by wall time)."""
    if end <= start:
        return 1.0 if window_start <= start < window_end else 0.0
    inside = min(end, window_end) - max(start, window_start)
    return max(inside, 0) / (end - start)

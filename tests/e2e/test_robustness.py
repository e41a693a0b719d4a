"""labelprof under churn, without privileges, and writing its output where
others can plant files: the label library dlopen()ed and dlclose()d over and
over, thousands of short-lived labelled threads, a non-root uid missing a
capability, and hostile or unusual output paths. (deploy/capabilities.txt,
which the service grants, is tested in test_deploy.py.)"""

import os
import pathlib
import shutil
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import (ATTRIBUTION_MIN, FREQ, LABELPROF, check_exit, count, in_function,
                      label_set, labels_of, load_json, measure, record, recording, started,
                      workload)

# The unloadable copy is the library without -z nodelete: dlclose() unmaps it.
DLCYCLE_LIBS = {"nodelete": None, "unloadable": "unloadable/libcustomlabels.so"}
DLCYCLE_SECONDS = 3
THREADS = 3000
NOBODY = 65534


def bounding_caps():
    """Capability names in this process's bounding set (a container may lack some)."""
    with open("/proc/self/status") as f:
        bnd = int(next(l for l in f if l.startswith("CapBnd:")).split()[1], 16)
    bits = {"sys_ptrace": 19, "perfmon": 38, "bpf": 39}
    return {name for name, bit in bits.items() if bnd >> bit & 1}


def thread_label_states(key, threads):
    """For workload threads that set KEY=N and then tid=T in two calls: each
    tid's full label set, and the one it really has between the two calls."""
    own = {tid: label_set({key: str(n), "tid": str(tid)}) for n, tid in threads}
    partial = {tid: label_set({key: str(n)}) for n, tid in threads}
    return own, partial


@pytest.mark.parametrize("lib", DLCYCLE_LIBS)
def test_dlopen_dlclose_cycles(request, tmp_path, lib):
    """Labels of a library opened and closed ~100 times a second: no sample
    carries labels its thread did not have, and late cycles are labelled too."""
    report_path = tmp_path / "dlcycle.json"
    argv = [workload("dlcycle"), "--wait-stdin", "--output", report_path]
    if DLCYCLE_LIBS[lib]:
        # Each load of it leaks a pthread key (1024 per process): stay below.
        argv += ["--lib", workload(DLCYCLE_LIBS[lib]), "--cycles", 900]
    with started(argv) as wl:
        with recording(tmp_path, "-p", wl.pid) as rec:
            time.sleep(DLCYCLE_SECONDS)
            # ends inside the recording: its last cycle is then the last one sampled
            wl.stop()
    check_exit(wl)
    assert rec.returncode == 0, rec.describe()
    report = load_json(report_path)
    unloaded = report["unmapped_after_dlclose"]
    assert unloaded == (report["cycles"] if lib == "unloadable" else 0), report["cycles"]

    # The thread ids of a cycle: a sample's labels must be its own thread's.
    own, partial = thread_label_states("cycle", report["threads"])
    samples = rec.profile.of_pids(wl.pid)
    labelled_fn = [s for s in samples if in_function(s, "burn_labelled")]
    wrong = [(s["tid"], s.get("labels")) for s in samples
             if labels_of(s) and labels_of(s) not in (own.get(s["tid"]), partial.get(s["tid"]))]
    stale = [s.get("labels") for s in samples if in_function(s, "burn_unlabelled") and labels_of(s)]
    right = [s for s in labelled_fn if labels_of(s) == own.get(s["tid"])]
    cycles = sorted({int(dict(labels_of(s))[b"cycle"]) for s in right})
    measure(request, f"{lib}: {report['cycles']} cycles ({unloaded} unmapped), "
                     f"{count(right)}/{count(labelled_fn)} burn_labelled samples labelled, "
                     f"from {len(cycles)} cycles")

    assert not wrong, f"samples with labels their thread did not have: {wrong[:5]}"
    assert not stale, f"labels after custom_labels_clear(): {stale[:5]}"
    assert count(labelled_fn) > 0
    # a library mapped again may get other TLS (glibc: dynamic TLS after 32
    # loads): labelprof re-inspects on every mapping of a label library
    late = cycles and cycles[-1] >= report["cycles"] // 2
    assert late, f"no labelled samples from the second half of the cycles: {cycles}"


def test_thread_churn(request, tmp_path):
    """Thousands of threads that live ~1 ms: each labelled sample carries the
    labels of the thread it was taken on."""
    report_path = tmp_path / "threadchurn.json"
    rec = record(tmp_path, "--", workload("threadchurn"), "--count", THREADS, "--output",
                 report_path)
    assert rec.returncode == 0, rec.describe()
    report = load_json(report_path)
    assert report["started"] == THREADS
    own, partial = thread_label_states("thread", report["threads"])
    samples = rec.profile.of_pids(report["pid"])
    burn = [s for s in samples if in_function(s, "burn_thread")]
    wrong = [(s["tid"], s.get("labels")) for s in samples
             if labels_of(s) and labels_of(s) not in (own.get(s["tid"]), partial.get(s["tid"]))]
    right = [s for s in burn if labels_of(s) == own.get(s["tid"])]
    threads = {s["tid"] for s in right}
    measure(request, f"{count(right)}/{count(burn)} burn_thread samples labelled, "
                     f"{len(threads)}/{THREADS} threads seen with their labels")

    assert not wrong, f"samples with another thread's labels: {wrong[:5]}"
    assert count(burn) > 0 and len(threads) > 0
    # The labels are set before the burn, in a process labelprof knows from its exec.
    assert count(right) >= ATTRIBUTION_MIN * count(burn), (
        f"{count(right)}/{count(burn)} burn_thread samples carry their thread's labels")


def test_missing_capability_is_named(tmp_path):
    """A non-root user with CAP_BPF and CAP_SYS_PTRACE but not CAP_PERFMON
    is told which capability is missing, before anything is loaded."""
    caps = ",".join("+" + c for c in ("bpf", "sys_ptrace") if c in bounding_caps())
    proc = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                           "--clear-groups", f"--inh-caps={caps}", f"--ambient-caps={caps}",
                           str(LABELPROF), "record", "-a", "-d", "1", "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert "CAP_PERFMON is missing" in proc.stderr and "privileges" in proc.stderr, proc.stderr
    assert "sampling" not in proc.stderr


def record_to(tmp_path, out):
    """A short recording of this (idle) process written to out."""
    return record(tmp_path, "-p", os.getpid(), duration=1, timeout=30, out=out)


def test_symlink_in_sticky_directory_is_replaced(tmp_path):
    """A symlink another user planted at the output path in a world-writable
    sticky directory is replaced by the profile; its target is untouched."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    victim.chmod(0o666)
    shared = pathlib.Path(tempfile.mkdtemp(prefix="labelprof-test-"))
    try:
        shared.chmod(0o1777)
        out = shared / "profile.json"
        out.symlink_to(victim)
        os.lchown(out, NOBODY, NOBODY)
        rec = record_to(tmp_path, out)
        assert rec.returncode == 0, rec.describe()
        assert victim.read_bytes() == b"precious\n"
        assert stat.S_ISREG(os.lstat(out).st_mode)
        assert rec.profile.samples is not None
        assert sorted(p.name for p in shared.iterdir()) == ["profile.json"], "temporary left"
    finally:
        shutil.rmtree(shared)


def test_output_mode_ignores_umask(tmp_path):
    old = os.umask(0)
    try:
        rec = record_to(tmp_path, tmp_path / "profile.json")
    finally:
        os.umask(old)
    assert rec.returncode == 0, rec.describe()
    mode = stat.S_IMODE(os.stat(rec.out).st_mode)
    assert mode & ~0o644 == 0, f"profile written with mode {mode:o}"


def test_dev_null_stays_a_device(tmp_path):
    rec = record_to(tmp_path, pathlib.Path("/dev/null"))
    assert rec.returncode == 0, rec.describe()
    st = os.lstat("/dev/null")
    assert stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3


def test_symlink_to_stdout_writes_to_stdout(tmp_path):
    """-o /dev/stdout, tried on a copy of that symlink (the real one in /dev
    must not be at stake): the profile goes to standard output."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    cmd = [str(LABELPROF), "record", "-p", str(os.getpid()), "-d", "1", "-o", str(link)]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert os.path.islink(link), "the symlink was replaced"
    assert b'"labelprof-json"' in proc.stdout, proc.stdout[:200]


def test_read_only_directory(tmp_path):
    """An unwritable destination fails before sampling, naming the path."""
    ro = tmp_path / "ro"
    ro.mkdir()
    # Root writes to a mode 0555 directory anyway: a read-only mount is read-only.
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], check=True)
    try:
        rec = record_to(tmp_path, ro / "profile.json")
        assert rec.returncode != 0, rec.describe()
        assert str(ro / "profile.json") in rec.stderr and "read-only" in rec.stderr.lower(), \
            rec.stderr
        assert "sampling" not in rec.stderr
        assert not list(ro.iterdir())
    finally:
        subprocess.run(["umount", str(ro)], check=True)

"""The CLI's errors: a target that does not exist or an output that cannot be
written ends labelprof at once, with a non-zero status and a message that
names the problem."""

import os

from conftest import record


def free_pid():
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) - 1
    while os.path.exists(f"/proc/{pid}"):
        pid -= 1
    return pid


def check_error(rec, *words):
    assert rec.returncode != 0, f"expected a failure: {rec.describe()}"
    message = rec.stderr.lower()
    assert all(w.lower() in message for w in words), (
        f"the message should mention {words}: {rec.stderr!r}")
    assert not rec.out.exists(), "a profile was written anyway"


def test_unknown_pid(tmp_path):
    pid = free_pid()
    rec = record(tmp_path, "-p", pid, duration=1, timeout=30)
    check_error(rec, str(pid))
    assert any(w in rec.stderr.lower() for w in ("no such process", "not found", "not exist"))


def test_cgroup_not_found(tmp_path):
    path = "/sys/fs/cgroup/labelprof-e2e-no-such-cgroup"
    rec = record(tmp_path, "--cgroup", path, duration=1, timeout=30)
    check_error(rec, path)
    assert any(w in rec.stderr.lower() for w in ("no such", "not found", "not exist"))


def test_output_directory_missing(tmp_path):
    out = tmp_path / "missing" / "profile.json"
    rec = record(tmp_path, "-p", os.getpid(), duration=1, timeout=30, out=out)
    check_error(rec, str(out), "no such file or directory")


def test_output_is_a_directory(tmp_path):
    out = tmp_path / "a-directory"
    out.mkdir()
    rec = record(tmp_path, "-p", os.getpid(), duration=1, timeout=30, out=out)
    assert rec.returncode != 0, f"expected a failure: {rec.describe()}"
    assert str(out) in rec.stderr and "directory" in rec.stderr.lower(), rec.stderr
    assert not any(out.iterdir()), "files were left in the output path"

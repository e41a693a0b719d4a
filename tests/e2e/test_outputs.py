"""Where a profile goes and what labelprof returns: -o's file name says the
format unless --format does (and the two must agree); a profile that cannot
be written where asked is kept in another file, named on stderr, with a
non-zero status; `record -- CMD` exits with CMD's status."""

import gzip
import json
import os
import re
import signal
import subprocess

import pytest

from conftest import LABELPROF

# what each name's ending makes of a profile: a test of its first bytes
BY_NAME = {
    "cpu.pb.gz": lambda b: b[:2] == b"\x1f\x8b",
    "cpu.pprof": lambda b: b[:2] == b"\x1f\x8b",
    "cpu.otlp": lambda b: b[:1] == b"\x0a",  # resource_profiles, field 1
    "cpu.otlp.pb": lambda b: b[:1] == b"\x0a",
    "cpu.otlp.json": lambda b: b'"resourceProfiles"' in b,
    "cpu.json": lambda b: b'"samples"' in b and b"resourceProfiles" not in b,
    "cpu.folded": lambda b: not b.startswith(b"{") and b" " in b,
    "cpu.HTML": lambda b: b.lower().startswith(b"<!doctype html"),
}


def run(*args, timeout=120, **kw):
    return subprocess.run([str(LABELPROF), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """A short recording of a busy shell, as JSON."""
    out = tmp_path_factory.mktemp("outputs") / "profile.json"
    proc = run("record", "-F", 999, "--format", "json", "-o", out, "--",
               "sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("name", BY_NAME)
def test_convert_takes_the_format_from_the_name(profile, tmp_path, name):
    out = tmp_path / name
    proc = run("convert", profile, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert BY_NAME[name](out.read_bytes()), f"{name}: {out.read_bytes()[:80]!r}"


def test_record_takes_the_format_from_the_name(tmp_path):
    """The first hour's case: record -o cpu.pb.gz is a pprof profile."""
    out = tmp_path / "cpu.pb.gz"
    proc = run("record", "-d", 1, "-o", out, "--", "sleep", "0.5")
    assert proc.returncode == 0, proc.stderr
    data = gzip.decompress(out.read_bytes())
    assert data[:1] == b"\x0a", "not a pprof Profile (sample_type, field 1)"
    back = run("convert", out, "--format", "json")
    assert back.returncode == 0 and json.loads(back.stdout)["samples"] is not None, back.stderr


@pytest.mark.parametrize("command", ["record", "convert"])
def test_format_and_name_disagree(profile, tmp_path, command):
    out = tmp_path / "cpu.pb.gz"
    args = ["-d", 1, "--", "true"] if command == "record" else [profile]
    proc = run(command, "--format", "json", "-o", out, *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"labelprof {command}: --format json: {out} is named like a "
                                  "pprof file"), proc.stderr
    assert "sampling" not in proc.stderr
    assert not out.exists()


def test_format_given_for_another_name(profile, tmp_path):
    """A name that says nothing leaves --format alone; OTLP JSON may go in a .json file."""
    for name, fmt in (("cpu.txt", "folded"), ("cpu.json", "otlp-json"), ("cpu", "pprof")):
        out = tmp_path / name
        proc = run("convert", profile, "--format", fmt, "-o", out)
        assert proc.returncode == 0, proc.stderr
    assert b'"resourceProfiles"' in (tmp_path / "cpu.json").read_bytes()
    assert (tmp_path / "cpu").read_bytes()[:2] == b"\x1f\x8b"


KEPT = re.compile(r"^labelprof: wrote (\S+) \(.*\) instead$", re.M)


def kept_file(stderr):
    m = KEPT.search(stderr)
    assert m, f"no line says where the profile went: {stderr!r}"
    return m.group(1)


def test_full_device_keeps_the_profile(profile, tmp_path):
    """A write that fails (ENOSPC from /dev/full) keeps the profile in $TMPDIR."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = run("convert", profile, "-o", "/dev/full", env=env)
    assert proc.returncode == 1, proc.stderr
    assert "cannot write the profile to /dev/full: No space left on device" in proc.stderr
    kept = kept_file(proc.stderr)
    assert os.path.dirname(kept) == str(tmp_path), kept
    assert open(kept, "rb").read() == profile.read_bytes()


def test_full_disk_keeps_the_recording(tmp_path):
    """A finished recording that the file system cannot take goes to the
    current directory when $TMPDIR cannot take it either."""
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(full)], check=True)
    try:
        out = full / "cpu.json"
        env = dict(os.environ, TMPDIR=str(full))
        proc = run("record", "-F", 999, "-o", out, "--", "sh", "-c",
                   "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done", env=env,
                   cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert f"cannot write the profile to {out}: No space left on device" in proc.stderr
        kept = kept_file(proc.stderr)
        assert os.path.dirname(kept) == str(tmp_path), kept
        assert kept.endswith("-cpu.json"), kept
        doc = json.loads(open(kept, "rb").read())
        assert doc["samples"], "the recording was not kept whole"
        assert os.listdir(full) == [], "a partial file stayed on the full disk"
    finally:
        subprocess.run(["umount", str(full)], check=True)


def test_immutable_file_is_refused_before_sampling(profile, tmp_path):
    out = tmp_path / "cpu.json"
    out.write_text("old")
    if subprocess.run(["chattr", "+i", str(out)], capture_output=True).returncode:
        pytest.skip("the file system has no immutable files")
    try:
        proc = run("record", "-d", 1, "-o", out, "--", "true")
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.strip() == f"labelprof: cannot write {out}: Operation not permitted"
        assert out.read_text() == "old"
    finally:
        subprocess.run(["chattr", "-i", str(out)], check=True)


@pytest.mark.parametrize("script,status", [
    ("exit 0", 0), ("exit 3", 3), ("kill -TERM $$", 128 + signal.SIGTERM),
    ("kill -KILL $$", 128 + signal.SIGKILL)])
def test_record_returns_the_command_status(tmp_path, script, status):
    out = tmp_path / "cpu.json"
    proc = run("record", "-o", out, "--", "sh", "-c", script)
    assert proc.returncode == status, proc.stderr
    assert out.exists(), "the profile is written whatever the command's status"

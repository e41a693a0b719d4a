"""labelprof's JSON read back (`labelprof convert`, user/format/input_json.c): a
profile of the hostile workload (label bytes that are not UTF-8, control
bytes, long values) converts to JSON byte for byte as recorded, also after
Python re-encodes it in another layout; it converts to folded stacks with the
same sample count; broken documents are refused with the line and column of
the problem."""

import json
import re
import subprocess

import pytest

from conftest import LABELPROF, check_exit, count, load_json, record, started, workload

DURATION = 2


def convert(*args, stdin=None):
    return subprocess.run([str(LABELPROF), "convert", *map(str, args)], input=stdin,
                          capture_output=True, timeout=120)


def converted(*args, stdin=None):
    proc = convert(*args, stdin=stdin)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The hostile workload recorded as JSON: (path, bytes)."""
    tmp = tmp_path_factory.mktemp("json-input")
    with started([workload("hostile"), "--wait-stdin", "--output", tmp / "hostile.json"]) as wl:
        rec = record(tmp, "-p", wl.pid, duration=DURATION, out=tmp / "profile.json")
    check_exit(wl)
    assert rec.returncode == 0, rec.describe()
    data = rec.out.read_bytes()
    # what makes the round trip worth testing: bytes a plain JSON parser would refuse
    assert b"\\udc" in data, "the hostile workload's non-UTF-8 labels are not in the profile"
    return rec.out, data


def test_json_to_json_is_identity(recorded, tmp_path):
    path, data = recorded
    assert converted(path, "--format", "json") == data
    assert converted(path, "--input-format", "json", "--format", "json") == data
    assert converted("-", "--format", "json", stdin=data) == data
    out = tmp_path / "again.json"
    converted(path, "-o", out)
    assert out.read_bytes() == data


def test_reencoded_by_python(recorded, tmp_path):
    """Another writer's layout (indentation, sorted keys, every non-ASCII
    character escaped, surrogate escapes for bytes) reads as the same profile."""
    path, data = recorded
    doc = load_json(path)
    other = tmp_path / "python.json"
    other.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True),
                     encoding="ascii")
    assert other.read_bytes() != data
    assert converted(other, "--format", "json") == data


def test_json_to_folded(recorded):
    path, _ = recorded
    folded = converted(path, "--format", "folded").decode("utf-8")
    total = sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines())
    assert total == count(load_json(path)["samples"])


def refused(path, *args):
    proc = convert(path, "--format", "json", *args)
    assert proc.returncode == 1, f"accepted: {proc.stdout[:200]!r}"
    assert not proc.stdout
    return proc.stderr.decode("utf-8", "replace").strip()


def test_broken_documents_refused(recorded, tmp_path):
    path, data = recorded
    cut = tmp_path / "truncated.json"
    cut.write_bytes(data[:len(data) // 2])
    err = refused(cut)
    assert re.fullmatch(rf"labelprof: {re.escape(str(cut))}: line \d+ column \d+: .+", err), err

    # Python writing the surrogate escapes back as raw bytes: not UTF-8, not the format
    raw = tmp_path / "raw-bytes.json"
    raw.write_bytes(json.dumps(load_json(path), ensure_ascii=False).encode("utf-8",
                                                                           "surrogateescape"))
    assert re.search(r"line 1 column \d+: byte 0x[89a-f][0-9a-f] in a string is not UTF-8",
                     refused(raw))

    newer = tmp_path / "v2.json"
    newer.write_text('{"format":"labelprof-json","version":2,"samples":{"changed":true}}')
    assert refused(newer).endswith("line 1 column 38: version 2 is not supported: "
                                   "this labelprof reads version 1")

    dup = tmp_path / "duplicate-label.json"
    dup.write_text('{"format":"labelprof-json","version":1,"samples":[\n'
                   '{"pid":1,"tid":1,"count":1,"labels":{"a":"1","\\u0061":"2"}}]}')
    assert refused(dup).endswith("line 2 column 46: duplicate label key")

    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert refused(empty, "--input-format", "json") == f"labelprof: {empty}: empty file"

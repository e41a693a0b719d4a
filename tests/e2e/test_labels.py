"""`labelprof labels PID` and `labelprof inspect PID|FILE`: the labels every
thread has right now, read by the BPF task iterator, against what the steady
workload set (exact bytes, v0 and v1, in the executable or a library); the
reasons given when there are none; and the ELF facts inspect reports against
readelf's."""

import contextlib
import json
import os
import platform
import re
import subprocess

import pytest

from conftest import LABELPROF, OUTPUT, as_bytes, load_json, started, workload
from test_cli import free_pid

STEADY = [f"v{abi}-{linkage}" for abi in (1, 0) for linkage in ("exe", "lib")]
LIB = OUTPUT / "lib"
FIXTURES = OUTPUT / "tests" / "tls"
DEFAULT_MAX_LABELS = 16

if platform.machine() == "x86_64":
    TLS_RELOCS = {"R_X86_64_TLSDESC", "R_X86_64_TPOFF64", "R_X86_64_DTPMOD64",
                  "R_X86_64_DTPOFF64"}
else:
    TLS_RELOCS = {"R_AARCH64_TLSDESC", "R_AARCH64_TLS_TPREL", "R_AARCH64_TLS_DTPMOD",
                  "R_AARCH64_TLS_DTPREL"}


def labelprof(*args, timeout=60):
    assert LABELPROF.is_file(), f"{LABELPROF} is missing: build it with 'make OUTPUT={OUTPUT}'"
    return subprocess.run([str(LABELPROF), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=timeout)


def describe(proc):
    return (f"`{' '.join(map(str, proc.args))}` exited {proc.returncode}: "
            f"{proc.stderr.decode(errors='replace').strip()}")


def json_of(proc):
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout.decode("utf-8", "surrogateescape"),
                      object_pairs_hook=no_duplicates)


def no_duplicates(pairs):
    obj = dict(pairs)
    assert len(obj) == len(pairs), f"JSON object repeats keys: {[k for k, _ in pairs]!r}"
    return obj


def fails(proc, *words):
    """labelprof failed with status 1 and one line that says all of words."""
    assert proc.returncode == 1, describe(proc)
    assert not proc.stdout, f"output despite the failure: {proc.stdout!r}"
    message = proc.stderr.decode(errors="replace")
    assert message.startswith("labelprof: ") and message.count("\n") == 1, message
    for w in words:
        assert w.lower() in message.lower(), f"{w!r} not in {message!r}"


def unescape(text):
    """Text output back to bytes: every \\xHH is one byte (a backslash is always escaped)."""
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), text)


def parse_text(out):
    """`labelprof labels` text: (header, {tid: (comm, status, count, {key: value})})."""
    lines = out.split(b"\n")
    assert lines[-1] == b"", "output does not end with a newline"
    threads, current = {}, None
    for line in lines[1:-1]:
        if line.startswith(b"  "):
            key, sep, value = line[2:].partition(b"=")
            assert sep, f"label line without '=': {line!r}"
            current[3][unescape(key)] = unescape(value)
            continue
        m = re.fullmatch(rb"tid (\d+) comm (\S+): (\w+)(?:, (\d+) labels?)?(?: \(.*\))?", line)
        assert m, f"unexpected line {line!r}"
        count = int(m[4]) if m[4] is not None else None
        current = (unescape(m[2]), m[3].decode(), count, {})
        threads[int(m[1])] = current
    return lines[0].decode(errors="replace"), threads


def expected_threads(report):
    """tid -> (comm, {key: value}) from the workload's report, in bytes."""
    out = {}
    for t in report["threads"]:
        labels = {}
        for k, v in t["labels"]:
            labels.setdefault(as_bytes(k), as_bytes(v))
        out[t["tid"]] = (as_bytes(t["comm"]), labels)
    return out


@contextlib.contextmanager
def steady(tmp_path, variant):
    report = tmp_path / f"steady-{variant}.json"
    with started([workload(f"steady-{variant}"), "-o", report]) as wl:
        yield wl, load_json(report)


@contextlib.contextmanager
def fixture(name, *args):
    """A tests/tls fixture: it prints facts and "ready" on stdout, then waits for stdin's end."""
    path = FIXTURES / name
    assert path.is_file(), f"{path} is missing: build it with 'make OUTPUT={OUTPUT} test-build'"
    proc = subprocess.Popen([str(path), *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for line in proc.stdout:
            if line.strip() == b"ready":
                break
        else:
            pytest.fail(f"{name} did not get ready: {proc.stderr.read()!r}")
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.mark.parametrize("variant", STEADY)
def test_labels_json(tmp_path, variant):
    with steady(tmp_path, variant) as (wl, report):
        doc = json_of(labelprof("labels", "--json", wl.pid))
    expected = expected_threads(report)
    assert doc["pid"] == wl.pid
    assert doc["form"] == f"custom_labels_v{report['abi']}"
    library = f"libcustomlabels{'-v0' if report['abi'] == 0 else ''}.so"
    assert doc["object"].endswith(library if variant.endswith("lib") else f"steady-{variant}")
    got = {t["tid"]: t for t in doc["threads"]}
    assert set(got) == set(expected), f"threads {sorted(got)} != {sorted(expected)}"
    for tid, (comm, labels) in expected.items():
        t = got[tid]
        assert as_bytes(t["comm"]) == comm
        read = {as_bytes(k): as_bytes(v) for k, v in t["labels"].items()}
        if len(labels) > DEFAULT_MAX_LABELS:
            # more than labelprof reads: a subset, flagged
            assert t["status"] == "truncated" and "truncated" in t["flags"], t
            assert len(read) == DEFAULT_MAX_LABELS and read.items() <= labels.items(), t
        else:
            assert (t["status"], t["flags"]) == ("ok", ["labels_read"]), t
            assert read == labels, f"tid {tid} ({comm!r})"


@pytest.mark.parametrize("variant", ["v1-lib", "v0-exe"])
def test_labels_text(tmp_path, variant):
    with steady(tmp_path, variant) as (wl, report):
        proc = labelprof("labels", wl.pid)
    assert proc.returncode == 0, describe(proc)
    header, threads = parse_text(proc.stdout)
    assert header.startswith(f"pid {wl.pid}: custom_labels_v{report['abi']} from /"), header
    expected = expected_threads(report)
    assert set(threads) == set(expected)
    for tid, (comm, labels) in expected.items():
        got_comm, status, count, read = threads[tid]
        assert got_comm == comm
        assert count == len(read)
        if len(labels) > DEFAULT_MAX_LABELS:
            assert status == "truncated" and read.items() <= labels.items()
        else:
            assert status == "ok" and read == labels, f"tid {tid}: {read!r} != {labels!r}"
    # the hostile bytes really went through the escaping
    assert b"\\xff" in proc.stdout and b"a\\x3db=c=d" in proc.stdout


def test_labels_no_library():
    proc = subprocess.Popen(["sleep", "60"])
    try:
        result = labelprof("labels", proc.pid)
        inspected = json_of(labelprof("inspect", "--json", proc.pid))
    finally:
        proc.kill()
        proc.wait()
    fails(result, f"pid {proc.pid} publishes no labels", "custom_labels_abi_version",
          "libcustomlabels")
    assert inspected["status"] == "none" and inspected["recipe"] is None
    assert "custom_labels_abi_version" in inspected["message"]


def test_labels_unknown_version():
    with fixture("exe-gcc-pie-v7") as proc:
        result = labelprof("labels", proc.pid)
        inspected = json_of(labelprof("inspect", "--json", proc.pid))
    fails(result, "publishes no labels", "version 7", "exe-gcc-pie-v7")
    assert inspected["status"] == "none" and "version 7" in inspected["message"]
    assert inspected["file"]["abi_version"] == 7 and inspected["file"]["form"] is None


def test_labels_dtv_unallocated():
    """A dlopen'd general-dynamic library: a thread that never touched it has no block."""
    with fixture("exe-gcc-plain", FIXTURES / "lib-gd-v1.so") as proc:
        doc = json_of(labelprof("labels", "--json", proc.pid))
        inspected = json_of(labelprof("inspect", "--json", proc.pid))
    statuses = sorted(t["status"] for t in doc["threads"])
    assert statuses == ["dtv_unallocated", "ok", "ok"], doc
    assert all(t["labels"] == {} for t in doc["threads"])
    assert inspected["case"] == "general_dynamic" and inspected["recipe"]["access"] == "dtv"
    assert inspected["recipe"]["dtv_modid"] >= 1
    assert inspected["object"].endswith("/lib-gd-v1.so")


def test_labels_errors(tmp_path):
    pid = free_pid()
    fails(labelprof("labels", pid), "no such process", str(pid))
    fails(labelprof("inspect", pid), "no such process", str(pid))
    with steady(tmp_path, "v1-lib") as (wl, report):
        worker = report["threads"][1]["tid"]
        fails(labelprof("labels", worker), f"{worker} is a thread of process {wl.pid}")


DEMO_KEYS = {"tenant", "endpoint", "request_id", "step"}


def test_labels_watch():
    """--watch: a request-serving thread is between requests at most instants; over
    two seconds every thread shows each label set it had and in how many reads."""
    with started([workload("demo"), "--threads", 2, "--duration", 60, "--quiet"]) as wl:
        doc = json_of(labelprof("labels", "--json", "--watch=2", wl.pid))
        text = labelprof("labels", "--watch=1", wl.pid)
        wl.proc.terminate()
    assert doc["pid"] == wl.pid and 1.9 <= doc["seconds"] < 10, doc["seconds"]
    assert doc["reads"] >= 20, doc["reads"]
    labelled = 0
    for t in doc["threads"]:
        assert t["comm"] == "demo" and 0 < t["reads"] <= doc["reads"], t
        assert sum(s["reads"] for s in t["sets"]) == t["reads"], t
        assert [s["reads"] for s in t["sets"]] == sorted((s["reads"] for s in t["sets"]),
                                                        reverse=True), t
        sets = [frozenset(s["labels"].items()) for s in t["sets"]]
        assert len(set(sets)) == len(sets), f"a label set listed twice: {t}"
        for s in t["sets"]:
            assert s["status"] == "ok" and set(s["labels"]) <= DEMO_KEYS, s
        labelled += sum(1 for s in t["sets"] if s["labels"])
    # the two workers served several requests each while watched
    assert labelled >= 4, doc
    assert text.returncode == 0, describe(text)
    lines = text.stdout.decode().splitlines()
    assert re.fullmatch(rf"pid {wl.pid}: \d+ reads in 1\.\d s", lines[1]), lines[:3]
    heads = [m for m in map(re.compile(r"tid (\d+) comm demo: (\d+) label sets? in (\d+) reads")
                           .fullmatch, lines) if m]
    assert len(heads) == 3, lines  # the main thread and two workers
    rows = [re.fullmatch(r"  +([\d.]+)% +(\d+)  ok, \d+ labels?", line) for line in lines]
    assert sum(1 for r in rows if r) == sum(int(m[2]) for m in heads), lines


@pytest.mark.parametrize("args", [["labels"], ["labels", "x"], ["labels", "1", "2"],
                                  ["labels", "--watch=0", "1"], ["labels", "--watch=x", "1"],
                                  ["labels", "--bogus", "1"], ["labels", "0"], ["inspect"],
                                  ["inspect", "0"], ["inspect", "a", "b"]])
def test_usage_errors(args):
    proc = labelprof(*args)
    assert proc.returncode == 2, describe(proc)
    assert b"Try `labelprof " in proc.stderr


def test_help():
    for cmd in ("labels", "inspect"):
        proc = labelprof(cmd, "--help")
        assert proc.returncode == 0 and b"Exit status" in proc.stdout, describe(proc)
    assert b"inspect" in labelprof("--help").stdout


# ---- inspect FILE, against readelf -------------------------------------------------------


def readelf(*args):
    return subprocess.run(["readelf", "-W", *map(str, args)], capture_output=True, check=True,
                          text=True).stdout


def readelf_symbol(path, name):
    """(st_value, "dynsym" or "symtab") of name; .dynsym first, as the spec wants."""
    table, found = None, {}
    for line in readelf("--syms", path).splitlines():
        m = re.match(r"Symbol table '\.(\w+)'", line)
        if m:
            table = m[1]
            continue
        f = line.split()
        if len(f) >= 8 and f[7] == name and f[6] != "UND":
            found.setdefault(table, int(f[1], 16))
    for table in ("dynsym", "symtab"):
        if table in found:
            return found[table], table
    return None, None


def readelf_tls_segment(path):
    for line in readelf("-l", path).splitlines():
        f = line.split()
        if f and f[0] == "TLS":
            return {"vaddr": int(f[2], 16), "memsz": int(f[5], 16), "align": int(f[-1], 16)}
    return None


def readelf_tls_relocs(path, name):
    """{(type, offset)} of the TLS relocations against symbol name."""
    out = set()
    for line in readelf("-r", path).splitlines():
        f = line.split()
        if len(f) >= 5 and f[2] in TLS_RELOCS and f[4] == name:
            out.add((f[2], int(f[0], 16)))
    return out


def roundup(v, a):
    return (v + a - 1) // a * a


FILES = {
    # name: (path, form, symbol, tls_model)
    "libcustomlabels.so": (LIB / "libcustomlabels.so", 1, "custom_labels_current_set",
                           "tlsdesc"),
    "libcustomlabels-v0.so": (LIB / "libcustomlabels-v0.so", 0,
                              "custom_labels_thread_local_data", "tlsdesc"),
    "exe-gcc-static-v1": (FIXTURES / "exe-gcc-static-v1", 1, "custom_labels_current_set",
                          "static"),
    "steady-v0-exe": (OUTPUT / "workloads" / "steady-v0-exe", 0,
                      "custom_labels_thread_local_data", "static"),
    "lib-gd-v1.so": (FIXTURES / "lib-gd-v1.so", 1, "custom_labels_current_set",
                     "general_dynamic"),
    "lib-ie-v1.so": (FIXTURES / "lib-ie-v1.so", 1, "custom_labels_current_set", "initial_exec"),
}


@pytest.mark.parametrize("name", FILES)
def test_inspect_file(name):
    path, abi, symbol, model = FILES[name]
    doc = json_of(labelprof("inspect", "--json", path))
    assert (doc["form"], doc["abi_version"], doc["version_in_file"]) == (
        f"custom_labels_v{abi}", abi, True)
    assert (doc["symbol"], doc["tls_model"]) == (symbol, model)
    value, table = readelf_symbol(path, symbol)
    assert (doc["symbol_offset"], doc["symbol_table"]) == (value, table)
    seg = readelf_tls_segment(path)
    assert doc["tls_segment"] == {"memsz": seg["memsz"], "align": seg["align"],
                                  "vaddr": hex(seg["vaddr"])}
    relocs = {(r["type"], int(r["offset"], 16)) for r in doc["relocations"]
              if r["against"] == "symbol"}
    assert relocs == readelf_tls_relocs(path, symbol)
    if model == "static":
        assert doc["type"] == "executable"
        # docs/design.md section 3, case 1
        if platform.machine() == "x86_64":
            tp_offset = -roundup(seg["memsz"], seg["align"]) + value
        else:
            tp_offset = roundup(16, seg["align"]) + value
        assert doc["tp_offset"] == tp_offset
    else:
        assert doc["type"] == "shared_library" and doc["tp_offset"] is None
        kinds = {t for t, _ in relocs}
        assert {"tlsdesc": "TLSDESC", "general_dynamic": "DTPMOD",
                "initial_exec": "TP"}[model] in " ".join(kinds)
    text = labelprof("inspect", path)
    assert text.returncode == 0, describe(text)
    assert f"labels: custom_labels_v{abi}".encode() in text.stdout
    assert symbol.encode() in text.stdout


def test_inspect_file_without_labels():
    for path, reason in ((FIXTURES / "exe-gcc-pie-v7", "unknown ABI version 7"),
                         ("/bin/true", "no custom_labels_abi_version")):
        doc = json_of(labelprof("inspect", "--json", path))
        assert doc["form"] is None and reason in doc["reason"], doc
        text = labelprof("inspect", path)
        assert text.returncode == 0 and b"labels: none: " + reason.encode() in text.stdout


def test_inspect_file_errors(tmp_path):
    fails(labelprof("inspect", tmp_path / "missing"), "no such file")
    text = tmp_path / "text"
    text.write_text("not an ELF file, but long enough to hold an ELF header\n" * 4)
    fails(labelprof("inspect", text), "not an ELF file")


@pytest.mark.parametrize("variant,case,object_name", [
    ("v1-lib", "tlsdesc_static", "libcustomlabels.so"),
    ("v0-exe", "exe_static", "steady-v0-exe"),
])
def test_inspect_pid(tmp_path, variant, case, object_name):
    with steady(tmp_path, variant) as (wl, report):
        doc = json_of(labelprof("inspect", "--json", wl.pid))
        labels = json_of(labelprof("labels", "--json", wl.pid))
        text = labelprof("inspect", wl.pid)
    form = f"custom_labels_v{report['abi']}"
    assert (doc["status"], doc["case"], doc["libc"]) == ("ok", case, "glibc"), doc
    assert os.path.basename(doc["object"]) == object_name
    assert doc["recipe"]["form"] == form and doc["recipe"]["access"] == "tp_offset"
    assert doc["recipe"]["exec_seq"] == 0
    assert doc["file"]["form"] == form
    # what labels reads with is what inspect shows
    assert (labels["form"], labels["object"]) == (form, doc["object"])
    if case == "exe_static":
        assert doc["recipe"]["offset"] == doc["file"]["tp_offset"]
    assert text.returncode == 0, describe(text)
    assert f"pid {wl.pid}: {form}: ".encode() in text.stdout and b"recipe: " in text.stdout

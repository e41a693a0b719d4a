"""Python frames and labels against ground truth (docs/design.md section 11):
tests/workloads/python/pyburn.py burns CPU in burn_N only under the label
set=N and in a span of its own (OpenTelemetry thread context), on threads or
in asyncio tasks, at the bottom of nested calls made from the module's top
level. On Debian's python3.11 (also run from a virtualenv, and embedded in a
C program: tests/workloads/pyembed.c) and pyenv's 3.10, 3.12 and 3.13 (those
present): the innermost Python frame of a burn sample names a burn function,
its labels are its set and its span, its Python frames reach the top of its
thread (<module>, or threading's Thread._bootstrap), and record -v counts the
walks. labelprof inspect of the running workload names the interpreter and
its threads. A pprof file keeps the Python frames apart from native and
kernel ones through convert. The customlabels package installs the labels of
the running code, as the library reads them back."""

import gzip
import json
import os
import pathlib
import re
import subprocess
import time

import pytest

from conftest import (FREQ, LABELPROF, OUTPUT, REPO, count, load_json, measure, record,
                      started, workload)

DURATION = 4
INNERMOST_MIN = 0.95
LABELS_MIN = 0.99
TOP_MIN = 0.90
SCRIPT = REPO / "tests/workloads/python/pyburn.py"


def pyenv_python(minor):
    root = pathlib.Path(os.environ.get("PYENV_ROOT", "/root/.pyenv")) / "versions"
    found = sorted(root.glob(f"3.{minor}.*/bin/python3.{minor}")) if root.is_dir() else []
    return str(found[-1]) if found else None


INTERPRETERS = {"debian-3.11": "/usr/bin/python3.11", "pyenv-3.10": pyenv_python(10),
                "pyenv-3.12": pyenv_python(12), "pyenv-3.13": pyenv_python(13),
                "venv-3.11": "/usr/bin/python3.11", "embed-3.11": "pyembed"}


def interpreter(name, tmp_path):
    """The python of name; a virtualenv's is made in tmp_path (its bin/python3.11 a
    link to the base interpreter, run under the virtualenv's name and prefix); the
    embedding program is a workload (Debian's libpython)."""
    python = INTERPRETERS[name]
    if name.startswith("embed-"):
        return workload(python)
    if not python or not os.access(python, os.X_OK):
        pytest.skip(f"no {name} interpreter")
    if not name.startswith("venv-"):
        return python
    venv = tmp_path / "venv"
    made = subprocess.run([python, "-m", "venv", "--without-pip", str(venv)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    if made.returncode:
        pytest.skip(f"{python} -m venv: {made.stderr.strip()}")
    return str(venv / "bin" / pathlib.Path(python).name)


def workload_env(python):
    lib = OUTPUT / "lib/libcustomlabels.so"
    assert lib.is_file(), f"{lib} is missing: make test-build"
    return ["env", f"CUSTOMLABELS_LIB={lib}", f"CUSTOMLABELS_PATH={REPO / 'python'}"]


def python_frames(sample):
    return [f for f in sample["frames"] if f.get("kind") == "python"]


@pytest.mark.parametrize("mode", ["threads", "asyncio"])
@pytest.mark.parametrize("name", sorted(INTERPRETERS))
def test_python(tmp_path, request, name, mode):
    python = interpreter(name, tmp_path)
    rec = record(tmp_path, "-v", "--", *workload_env(python), python, SCRIPT, mode, DURATION,
                 timeout=DURATION + 120)
    # the process's name: its threads' too (threading does not name them)
    comm = pathlib.Path(python).name[:15]
    samples = [s for s in rec.profile.samples if s["comm"] == comm]
    burn = innermost = labelled = top = 0
    for s in samples:
        py = python_frames(s)
        names = [f.get("function") or "" for f in py]
        if not any(re.fullmatch(r"burn_\d", n) for n in names):
            continue
        n = s["count"]
        burn += n
        first = next(x for x in names if x in ("spin", "<lambda>", "<genexpr>")
                     or re.fullmatch(r"burn_\d", x) or x == "nest")
        fn = next(x for x in names if re.fullmatch(r"burn_\d", x))
        # the innermost Python frame runs the burn (spin, under burn_N)
        if first in ("spin", "<lambda>", "<genexpr>") or first == fn:
            innermost += n
        # its set, and its request's span: the ids of the span are its own (checked
        # by the span id's first byte: the rest is unique per request)
        labels = s.get("labels") or {}
        if ({k: labels.get(k) for k in ("set", "http.route", "service.name")} ==
                {"set": fn[-1], "http.route": f"/set/{fn[-1]}", "service.name": "pyburn"}
                and re.fullmatch(f"0{fn[-1]}[0-9a-f]{{14}}", labels.get("span_id", ""))
                and re.fullmatch("[0-9a-f]{32}", labels.get("trace_id", ""))
                and set(labels) == {"set", "http.route", "service.name", "span_id",
                                    "trace_id"}):
            labelled += n
        # the outermost frame of its thread: the script's top level, or threading's
        if names[-1] in ("<module>", "Thread._bootstrap", "_bootstrap"):
            top += n
    assert burn > 100, f"{burn} burn samples of {count(samples)}: {rec.describe()}"
    # the BPF walk's own counters, as -v prints them
    walks = re.search(r"^labelprof: Python: (\d+) walks, (\d+) frames", rec.stderr, re.M)
    assert walks and int(walks[1]) > 0 and int(walks[2]) > 0, rec.stderr
    measure(request, f"{name} {mode}: {burn} burn samples, innermost {innermost / burn:.1%}, "
            f"labels {labelled / burn:.1%}, reach <module> {top / burn:.1%}")
    assert innermost / burn >= INNERMOST_MIN
    assert labelled / burn >= LABELS_MIN
    assert top / burn >= TOP_MIN


def test_python_pprof(tmp_path):
    """record's pprof puts Python frames on their "[python]" mapping, and convert
    reads them back as Python frames, not kernel ones."""
    python = interpreter("debian-3.11", tmp_path)
    out, doc = tmp_path / "python.pprof", tmp_path / "python.json"
    for cmd in (["record", "-F", FREQ, "-o", out, "--", *workload_env(python), python, SCRIPT,
                 "threads", 2],
                ["convert", out, "--format", "json", "-o", doc]):
        proc = subprocess.run([str(LABELPROF), *map(str, cmd)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    assert b"[python]" in gzip.decompress(out.read_bytes())
    frames = [f for s in load_json(doc)["samples"] for f in python_frames(s)]
    assert any(re.fullmatch(r"burn_\d", f["function"] or "") for f in frames), frames[:5]
    assert not any(f["kernel"] for f in frames)


@pytest.mark.parametrize("name", sorted(INTERPRETERS))
def test_customlabels_package(tmp_path, name):
    """python/customlabels installs on the thread the labels of the running code,
    as libcustomlabels reads them back: nested, on threads, in asyncio tasks, with
    values unique per block that neither leak nor outlive their block
    (tests/workloads/python/labels_check.py)."""
    python = interpreter(name, tmp_path)
    proc = subprocess.run([*workload_env(python), python,
                           REPO / "tests/workloads/python/labels_check.py"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stdout + proc.stderr


def inspect(*args):
    return subprocess.run([str(LABELPROF), "inspect", *map(str, args)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(INTERPRETERS))
def test_inspect_python(tmp_path, name):
    python = interpreter(name, tmp_path)
    minor = int(re.search(r"3\.(\d+)$", name).group(1))
    with started([*workload_env(python), python, SCRIPT, "threads", 8]) as wl:
        # the workers start after the ready line
        for _ in range(50):
            js = inspect("--json", wl.pid)
            if (json.loads(js.stdout).get("python") or {}).get("thread_states", 0) >= 2:
                break
            time.sleep(0.1)
        proc = inspect(wl.pid)
    assert proc.returncode == 0 and js.returncode == 0, proc.stderr + js.stderr
    # _Py_DebugOffsets is there from 3.13 on; older versions by the built-in table
    offsets = "_Py_DebugOffsets" if minor >= 13 else "built-in table"
    assert re.search(rf"^  Python 3\.{minor}: /\S+, offsets from {offsets}$", proc.stdout,
                     re.M), proc.stdout
    py = json.loads(js.stdout)["python"]
    assert py["version"] == f"3.{minor}" and py["offsets"] == offsets, py
    # an embedding program's interpreter is in the library it links
    if name.startswith("embed-"):
        assert pathlib.Path(py["file"]).name.startswith(f"libpython3.{minor}.so"), py
    # the main thread and the workers: by tid, or before 3.11 by pthread_t (an address)
    assert py["thread_states"] >= 2, py
    if minor >= 11:
        assert py["thread_ids"] == "tid" and wl.pid in py["threads"], py
    else:
        assert py["thread_ids"] == "pthread_t" and min(py["threads"]) > 1 << 32, py


@pytest.mark.parametrize("name", ["debian-3.11", "pyenv-3.10", "pyenv-3.12", "pyenv-3.13"])
def test_code_reused(tmp_path, request, name):
    """Code objects freed while sampling, their addresses taken by the next ones
    (tests/workloads/python/codechurn.py): no sample names a function other than
    the one that ran (the label gen=N says which). A code object freed before
    userspace read it cannot be named at all: half of them at least are."""
    python = interpreter(name, tmp_path)
    rec = record(tmp_path, "--", *workload_env(python), python,
                 REPO / "tests/workloads/python/codechurn.py", DURATION, timeout=DURATION + 120)
    labelled = named = wrong = 0
    for s in rec.profile.samples:
        gen = (s.get("labels") or {}).get("gen")
        py = python_frames(s)
        if gen is None or not py:
            continue
        labelled += s["count"]
        m = re.fullmatch(r"gen_(\d+)", py[0].get("function") or "")
        if m:
            named += s["count"]
            wrong += s["count"] * (m[1] != gen)
    measure(request, f"{name}: {labelled} samples in a generation, {named} named gen_N, "
            f"{wrong} named after another generation")
    assert labelled > 100, rec.describe()
    assert wrong == 0
    assert named / labelled >= 0.5

"""Function names as perf shows them: C++ names demangled (without parameters,
perf's default), the symbol as linked kept beside them in JSON ("symbol"), in
pprof (Function.system_name) and in OTLP; every format shows the demangled
name. The workload is unwind_cxx-gcc (tests/workloads/unwind_cxx.cpp), whose
inline thread runs std::sort's out-of-line template code.

Go executables stripped with -s -w keep Go's own function table: their
functions, files and lines come from it, also when the section headers are
stripped too (golabels, tests/workloads/golabels)."""
import os
import subprocess

import pytest

from conftest import LABELPROF, load_json, record, started, workload

DURATION = 3


def convert(src, fmt, out):
    proc = subprocess.run([str(LABELPROF), "convert", str(src), "--format", fmt, "-o", str(out)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"convert to {fmt} failed: {proc.stderr}"
    return out


def positions(doc):
    """(function, symbol) of every frame and inlined function of a JSON profile."""
    for s in doc["samples"]:
        for f in s.get("frames", []):
            yield f["function"], f.get("symbol")
            for i in f.get("inlined", []):
                yield i["function"], i.get("symbol")


def test_cxx_names_demangled(tmp_path):
    with started([workload("unwind_cxx-gcc"), "-o", tmp_path / "report.json"]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    assert rec.returncode == 0, rec.describe()
    doc = load_json(rec.out)
    names = set(positions(doc))
    mangled = sorted(n for n, _ in names if n and n.startswith(("_Z", "_R")))
    assert not mangled, f"names left mangled: {mangled[:5]}"
    cxx = {n: s for n, s in names if s and s.startswith("_Z")}
    assert cxx, "no C++ symbol sampled"
    sort = [n for n in cxx if n.startswith("std::__introsort_loop<")]
    assert sort, f"std::sort's code not named so: {sorted(cxx)[:5]}"
    # like perf: no parameter list after the name
    assert all(not n.endswith(")") for n in sort), sort

    folded = convert(rec.out, "folded", tmp_path / "p.folded").read_text()
    assert "std::__introsort_loop<" in folded and ";_Z" not in folded
    report = convert(rec.out, "report", tmp_path / "p.txt").read_text()
    assert "std::__introsort_loop<" in report and " _Z" not in report
    html = convert(rec.out, "html", tmp_path / "p.html").read_text()
    # the page's data is JSON in a script: "<" as \u003c
    assert "std::__introsort_loop\\u003c" in html and '"_Z' not in html
    # pprof and OTLP carry both names: back to JSON, the same pairs
    for fmt, ext in (("pprof", "pb.gz"), ("otlp", "otlp")):
        back = convert(convert(rec.out, fmt, tmp_path / f"p.{ext}"), "json",
                       tmp_path / f"{fmt}.json")
        assert {(n, s) for n, s in positions(load_json(back)) if s} >= set(cxx.items()), fmt


def noshdr_copy(src, dst):
    """src without section headers: e_shoff, e_shnum and e_shstrndx zeroed."""
    data = bytearray(open(src, "rb").read())
    data[0x28:0x30] = bytes(8)
    data[0x3c:0x40] = bytes(4)
    with open(dst, "wb") as f:
        f.write(data)
    os.chmod(dst, 0o755)
    return dst


GO_ROOTS = {"runtime.mstart", "runtime.goexit"}


def up_to_go_root(stack):
    """A user stack (leaf first) up to its first Go root function, included."""
    for i, f in enumerate(stack):
        if f["function"] in GO_ROOTS:
            return stack[:i + 1]
    return stack


@pytest.mark.parametrize("variant", ["stripped", "noshdr"])
def test_go_stripped_named(tmp_path, variant):
    binary = workload("golabels-cgo0-stripped")
    if variant == "noshdr":
        binary = noshdr_copy(binary, tmp_path / "golabels-noshdr")
    with started([binary, "-output", tmp_path / "report.json"]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    assert rec.returncode == 0, rec.describe()
    stacks = [[f for f in s.get("frames", []) if not f["kernel"]]
              for s in rec.profile.of_pids(wl.pid)]
    frames = [f for stack in stacks for f in stack]
    assert frames, "no user frame sampled"
    # Up to a thread's root (runtime.mstart, runtime.goexit): frame-pointer walks
    # of Go's scheduler threads may go on past it into words that are no code.
    thread = [f for stack in stacks for f in up_to_go_root(stack)]
    unnamed = [f for f in thread if f["function"] is None]
    assert len(unnamed) <= len(thread) // 100, f"unnamed frames: {unnamed[:3]}"
    spin = [f for f in frames if f["function"] == "main.spin"]
    assert spin, f"main.spin never sampled: {sorted({f['function'] for f in frames})[:20]}"
    assert all(f["file"].endswith("golabels/main.go") and f["line"] for f in spin), spin[:3]
    assert any(f["function"] == "runtime.goexit" for f in frames)

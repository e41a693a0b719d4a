"""Go pprof labels against ground truth: golabels goroutines (each locked to
its thread) switch label sets with pprof.Do every 1-5 ms, burning CPU in one
function per set, and report the CPU each set used. Built by Debian's Go with
and without cgo, stripped and not (docs/design.md section 8)."""

import bisect
import json
import re
import subprocess

import pytest

from conftest import (LABELPROF, check_exit, count, flags_of, label_set, labels_of, load_json,
                      measure, overlap_fraction, record, started, user_functions,
                      which_function, workload)

VARIANTS = [f"cgo{cgo}-{strip}" for cgo in (0, 1) for strip in ("plain", "stripped")]
DURATION = 3
# Share of the samples in a burn function that carry exactly its set.
GO_ATTRIBUTION_MIN = 0.99
# A set's share of the samples vs its share of the measured CPU time.
SHARE_TOLERANCE = 0.03
# Where a goroutine hands its thread to the scheduler: from there on the thread
# runs g0 with m.curg cleared, no goroutine's labels apply (as in Go's own
# profiler), though the goroutine's frames are still on the walked stack.
SCHEDULER_ENTRIES = {"runtime.mcall", "runtime.morestack"}


def golabels_argv(variant, report):
    return [workload(f"golabels-{variant}"), "--threads", "2", "--interval", "1000,5000",
            "--output", report]


def expected_cpu(report, window_start, window_end):
    cpu = {}
    names = {s["id"]: s["function"] for s in report["sets"]}
    for _tid, k, start, end, cpu_ns in report["intervals"]:
        fn = names[k] if k >= 0 else report["unlabelled"]["function"]
        cpu[fn] = cpu.get(fn, 0) + cpu_ns * overlap_fraction(start, end, window_start, window_end)
    return cpu


def section_bytes(binary, name):
    out = subprocess.run(["objcopy", "-O", "binary", f"--only-section={name}", binary,
                          "/dev/stdout"], capture_output=True, check=True, timeout=60)
    return out.stdout


def name_stripped_frames(samples, binary, plain):
    """Names the frames of a stripped Go binary (no .symtab: labelprof leaves
    them unnamed) with the symbols of the same program built without -s -w,
    whose code is byte for byte the same (checked)."""
    if binary == plain:
        return
    assert section_bytes(binary, ".text") == section_bytes(plain, ".text"), (
        f"{binary} and {plain} differ in code: the plain build's symbols do not apply")
    out = subprocess.run(["nm", "--defined-only", plain], capture_output=True, text=True,
                         check=True, timeout=60)
    syms = sorted((int(addr, 16), name) for addr, kind, name in
                  (line.split(None, 2) for line in out.stdout.splitlines()
                   if len(line.split(None, 2)) == 3) if kind in "tT")
    starts = [a for a, _ in syms]
    for s in samples:
        for f in s["frames"]:
            if f.get("kernel") or f.get("function") or f.get("module") != binary:
                continue
            i = bisect.bisect_right(starts, int(f["address"], 16)) - 1
            f["function"] = syms[i][1] if i >= 0 else None


def in_scheduler(sample, fn):
    """Whether the thread had left goroutine fn for the scheduler (leaf side of fn)."""
    frames = user_functions(sample)
    # assembly functions are named NAME.abi0 in .symtab, NAME in Go's own tables
    return any((f or "").removesuffix(".abi0") in SCHEDULER_ENTRIES
               for f in frames[:frames.index(fn)])


def check_golabels(request, rec, report, binary):
    prof = rec.profile
    expected = {s["function"]: label_set(s["labels"]) for s in report["sets"]}
    expected[report["unlabelled"]["function"]] = frozenset()
    samples = prof.of_pids(report["pid"])
    name_stripped_frames(samples, binary, binary.replace("-stripped", "-plain"))

    right = dict.fromkeys(expected, 0)
    total = dict.fromkeys(expected, 0)
    wrong = []
    scheduler = 0
    for s in samples:
        fn = which_function(s, expected)
        if fn is None:
            continue
        if in_scheduler(s, fn):
            scheduler += s["count"]
            continue
        total[fn] += s["count"]
        if labels_of(s) == expected[fn]:
            right[fn] += s["count"]
        else:
            wrong.append((fn, s["count"], s.get("labels"), s.get("flags"),
                          user_functions(s)[:8]))

    cpu = expected_cpu(report, prof.start_ns, prof.start_ns + prof.duration_ns)
    cpu_total = sum(cpu.values())
    sampled = sum(total.values())
    assert sampled > 0, "no sample in any burn function: are the stacks symbolized?"
    assert cpu_total > 0, "the workload burned no CPU inside the recording's time window"
    share_gap = max(abs(total[fn] / sampled - cpu.get(fn, 0) / cpu_total) for fn in expected)
    measure(request, f"{report['go_version']}: {count(samples)} samples, "
                     f"{sum(right.values())}/{sampled} in burn functions correctly labelled, "
                     f"{scheduler} in the scheduler left out, sample vs CPU shares within "
                     f"{share_gap:.1%}; counters {prof.counters}")
    for fn in expected:
        assert total[fn] > 0, f"no sample in {fn}"
        assert right[fn] / total[fn] >= GO_ATTRIBUTION_MIN, (
            f"{fn}: {right[fn]}/{total[fn]} samples carry exactly its labels "
            f"{sorted(expected[fn])}; wrong: {wrong[:5]}")
    for fn in expected:
        sample_share = total[fn] / sampled
        cpu_share = cpu.get(fn, 0) / cpu_total
        assert abs(sample_share - cpu_share) <= SHARE_TOLERANCE, (
            f"{fn}: {sample_share:.1%} of the samples but {cpu_share:.1%} of the CPU time")


@pytest.mark.parametrize("variant", VARIANTS)
def test_golabels_attribution(request, tmp_path, variant):
    """labelprof -p PID on a running Go program: every burn function's samples
    carry exactly the goroutine's pprof labels, in CPU proportions."""
    report_path = tmp_path / "golabels.json"
    with started(golabels_argv(variant, report_path)) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    report = load_json(report_path)
    assert report["go_version"].startswith("go1.")
    check_golabels(request, rec, report, workload(f"golabels-{variant}"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_golabels_labels_command(tmp_path, variant):
    """labelprof labels PID names the Go version and reads the goroutines'
    labels: every labelled thread shows one of the workload's sets."""
    report_path = tmp_path / "golabels.json"
    with started(golabels_argv(variant, report_path)) as wl:
        seen = set()
        for _ in range(20):
            out = subprocess.run([str(LABELPROF), "labels", "--json", str(wl.pid)],
                                 capture_output=True, timeout=60)
            assert out.returncode == 0, out.stderr
            doc = json.loads(out.stdout.decode("utf-8", "surrogateescape"))
            assert re.match(r"go1\.\d+(\.\d+)?: pprof labels \(map\)", doc["go"]), doc["go"]
            for t in doc["threads"]:
                assert t["status"] == "ok", t
                if t["labels"]:
                    seen.add(label_set(t["labels"]))
    check_exit(wl)
    sets = {label_set(s["labels"]) for s in load_json(report_path)["sets"]}
    assert seen, "no thread had labels in 20 reads"
    assert seen <= sets, f"sets the workload never set: {seen - sets}"


# gofake-go124's sets (tests/workloads/gofake.c): the slice format of Go >= 1.24.
GOFAKE_SETS = {
    "burn_set_0": {"endpoint": "/checkout", "tenant": "acme"},
    "burn_set_1": {"": "empty key", "region": "", "tenant": "globex"},
    "burn_set_2": {f"k{i}": f"v{i}" for i in range(10)},
    "burn_unlabelled": {},
}


def samples_by_function(rec, pid, names):
    by_fn = {fn: [] for fn in names}
    for s in rec.profile.of_pids(pid):
        fn = which_function(s, names)
        if fn is not None:
            by_fn[fn].append(s)
    return by_fn


def test_go_slice_format(request, tmp_path):
    """Go >= 1.24 keeps a goroutine's labels as a sorted slice: read from a C
    program that lays out g, m and the slice as Go 1.24 does and carries its
    build info, through the real inspection and BPF reader."""
    with started([workload("gofake-go124")]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    by_fn = samples_by_function(rec, wl.pid, GOFAKE_SETS)
    for fn, labels in GOFAKE_SETS.items():
        samples = by_fn[fn]
        right = count([s for s in samples if labels_of(s) == label_set(labels)])
        wrong = [(s.get("labels"), s.get("flags")) for s in samples
                 if labels_of(s) != label_set(labels)]
        measure(request, f"{fn}: {right}/{count(samples)} samples with exactly its labels")
        assert count(samples) > 0, f"no sample in {fn}"
        assert right / count(samples) >= GO_ATTRIBUTION_MIN, f"{fn}: wrong {wrong[:5]}"


# gofake-go119-hostile's threads (tests/workloads/gofake.c): hostile label maps
# and what each must give: exactly these labels, and this flag on every sample.
HOSTILE = {
    "hostile_good": ({"tenant": "acme", "endpoint": "/checkout"}, None),
    "hostile_huge_b": ({}, "malformed"),
    "hostile_cycle": ({"loop": "forever"}, "truncated"),
    "hostile_wild_buckets": ({}, "read_fault"),
    "hostile_count_lies": ({}, "malformed"),
    "hostile_growing": ({}, "truncated"),
    "hostile_wild_labels": ({}, "read_fault"),
}


def test_go_hostile_maps(request, tmp_path):
    """Go label maps laid out to harm the reader (B of 200, a bucket that is its
    own overflow, buckets and labels pointing nowhere, a count the buckets
    contradict, a map caught growing): no crash, no wrong label, each flagged
    and counted."""
    with started([workload("gofake-go119-hostile")]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    by_fn = samples_by_function(rec, wl.pid, HOSTILE)
    for fn, (labels, flag) in HOSTILE.items():
        samples = by_fn[fn]
        assert count(samples) > 0, f"no sample in {fn}"
        bad = [(s.get("labels"), s.get("flags")) for s in samples
               if labels_of(s) != label_set(labels) or (flag and flag not in flags_of(s))]
        assert not bad, f"{fn}: {bad[:5]}"
    counters = rec.profile.counters
    measure(request, f"counters {counters}")
    assert counters["malformed_labels"] > 0
    assert counters["label_read_faults"] > 0
    assert counters["truncations"] > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_go_inspect(variant):
    """labelprof inspect FILE names the Go version and how its labels are read."""
    out = subprocess.run([str(LABELPROF), "inspect", workload(f"golabels-{variant}")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^go: go1\.\d+\S*: pprof labels \(map\), g at tp-\d+", out.stdout, re.M), (
        out.stdout)


def test_go_unknown_version(tmp_path):
    """A Go version without known offsets: inspect says so, and no label is
    read (no guess), though the process lays out labels as Go 1.24 does."""
    binary = workload("gofake-go199")
    out = subprocess.run([str(LABELPROF), "inspect", binary], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "go: go1.99.1: labels not supported" in out.stdout, out.stdout
    with started([binary]) as wl:
        out = subprocess.run([str(LABELPROF), "inspect", "--json", str(wl.pid)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert doc["status"] == "none" and doc["go"].startswith("go1.99.1: labels not supported")
        rec = record(tmp_path, "-p", wl.pid, duration=1)
    check_exit(wl)
    samples = rec.profile.of_pids(wl.pid)
    assert count(samples) > 0
    assert not [s for s in samples if s.get("labels")]

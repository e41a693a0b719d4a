"""Label selection and cardinality on the demo workload (tests/workloads/demo.c):
every request carries tenant, endpoint and a fresh request_id (the checkout's tax
step adds step=tax). --drop-labels and --labels decide which keys a profile
keeps, before any output sees them; text views fold a key with too many values
into KEY=*.
"""

import os
import signal
import re
import shutil
import subprocess

import pytest

from conftest import LABELPROF, check_exit, load_json, measure, started, workload

FREQ = 999
DURATION = 2
DEMO_KEYS = {b"tenant", b"endpoint", b"request_id", b"step"}
TENANTS = {"acme", "globex", "initech"}
ENDPOINTS = {"/checkout", "/search", "/login"}


def run(*args, timeout=180, check=True):
    cmd = [str(a) for a in args]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, (f"`{' '.join(cmd)}` exited {proc.returncode}: "
                                      f"{proc.stderr.decode(errors='replace')}")
    return proc


@pytest.fixture(scope="module")
def demo():
    # the demo serves until its duration ends or SIGTERM (not when stdin closes)
    with started([workload("demo"), "--threads", 2, "--duration", 600, "--quiet"]) as wl:
        yield wl
        wl.proc.terminate()
    check_exit(wl)


def record(demo, out, fmt, *args):
    return run(LABELPROF, "record", "-p", demo.pid, "-F", FREQ, "-d", DURATION, "--format", fmt,
               "-o", out, *args)


def folded_lines(path):
    """(labels as {key: value}, count) per line of a folded file."""
    lines = []
    for line in path.read_text().splitlines():
        m = re.match(r"^[^;]*;\[([^\]]*)\];.* (\d+)$", line)
        assert m, f"not a folded line: {line!r}"
        labels = dict(kv.split("=", 1) for kv in m.group(1).split(",") if kv)
        lines.append((labels, int(m.group(2))))
    return lines


def json_label_sets(path):
    """Each sample's label keys, as bytes, with its count."""
    doc = load_json(path)
    return [({k.encode("utf-8", "surrogateescape") for k in s.get("labels", {})}, s["count"])
            for s in doc["samples"]]


def test_drop_request_id_folded(request, tmp_path, demo):
    base, dropped = tmp_path / "all.folded", tmp_path / "dropped.folded"
    # no folding: the raw lines a flame graph of request ids would get
    record(demo, base, "folded", "--max-label-values", 0)
    record(demo, dropped, "folded", "--drop-labels", "request_id")
    raw, lines = folded_lines(base), folded_lines(dropped)
    samples = sum(c for _, c in lines)
    measure(request, f"folded: {len(raw)} lines for {sum(c for _, c in raw)} samples with "
            f"request_id, {len(lines)} lines for {samples} samples with --drop-labels request_id")
    assert any("request_id" in labels for labels, _ in raw), "the demo sets request_id"
    assert samples > 0
    for labels, _ in lines:
        assert "request_id" not in labels, labels
        assert set(labels) <= {"tenant", "endpoint", "step"}, labels
    labelled = [labels for labels, _ in lines if labels]
    assert labelled, "no labelled line left"
    for labels in labelled:
        assert labels.get("tenant", "acme") in TENANTS, labels
        assert labels.get("endpoint", "/login") in ENDPOINTS, labels
        assert labels.get("step", "tax") == "tax", labels
    # what is left is a line per (tenant, endpoint, step) and stack, each key set or
    # not (a sample may come while a request sets its labels): request ids made
    # nearly one line per sample
    sets = {tuple(sorted(labels.items())) for labels in labelled}
    assert len(sets) <= (len(TENANTS) + 1) * (len(ENDPOINTS) + 1) * 2, sets
    assert len(lines) < len(raw)


def test_drop_request_id_pprof(request, tmp_path, demo):
    out = tmp_path / "cpu.pb.gz"
    record(demo, out, "pprof", "--drop-labels", "request_id")
    doc = tmp_path / "cpu.json"
    run(LABELPROF, "convert", out, "--format", "json", "-o", doc)
    keys = set().union(*(k for k, _ in json_label_sets(doc)))
    assert b"request_id" not in keys and b"tenant" in keys, keys
    if shutil.which("go"):
        home = tmp_path / "gohome"
        env = dict(os.environ, HOME=str(home), GOCACHE=str(home / "cache"),
                   GOPATH=str(home / "go"), GOFLAGS="", GOTOOLCHAIN="local", GOPROXY="off",
                   GOTELEMETRY="off", PPROF_TMPDIR=str(home))
        proc = subprocess.run(["go", "tool", "pprof", "-tags", str(out)], capture_output=True,
                              env=env, stdin=subprocess.DEVNULL, timeout=180)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        tags = proc.stdout.decode()
        measure(request, f"go tool pprof -tags: {len(tags.splitlines())} lines "
                "with --drop-labels request_id")
        assert "request_id" not in tags and "tenant" in tags, tags


def test_keep_glob(tmp_path, demo):
    out = tmp_path / "p.json"
    record(demo, out, "json", "--labels", "ten*")
    sets = json_label_sets(out)
    assert sum(c for k, c in sets if k == {b"tenant"}) > 0, sets
    for keys, _ in sets:
        assert keys <= {b"tenant"}, keys


def test_keep_and_drop(tmp_path, demo):
    out = tmp_path / "p.json"
    record(demo, out, "json", "--labels", "*", "--drop-labels", "request_*,step")
    keys = set().union(*(k for k, _ in json_label_sets(out)))
    assert keys == {b"tenant", b"endpoint"}, keys


@pytest.mark.parametrize("args, flag", [
    (["--labels", ""], "--labels"),
    (["--labels", "a,,b"], "--labels"),
    (["--drop-labels", "[request"], "--drop-labels"),
    (["--max-label-values", "-1"], "--max-label-values"),
])
def test_bad_flags(demo, args, flag):
    proc = run(LABELPROF, "record", "-p", demo.pid, "-d", 1, *args, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert flag + ":" in err, err


def test_convert_selection(tmp_path, demo):
    raw = tmp_path / "raw.json"
    record(demo, raw, "json")
    assert b"request_id" in set().union(*(k for k, _ in json_label_sets(raw)))
    out = tmp_path / "kept.json"
    run(LABELPROF, "convert", raw, "--format", "json", "-o", out, "--drop-labels", "request_id",
        "--labels", "t*,request_id")
    sets = json_label_sets(out)
    assert set().union(*(k for k, _ in sets)) == {b"tenant"}, sets
    # the samples are those of the recording, merged
    assert sum(c for _, c in sets) == sum(c for _, c in json_label_sets(raw))
    assert len(sets) < len(json_label_sets(raw))


TOP_ROW = re.compile(r"^ *\d+\.\d% +\d+  (\(not set\)|\S+) +(\(not set\)|\S+)  ")


def test_top_drop(demo):
    proc = run(LABELPROF, "top", "-p", demo.pid, "-F", FREQ, "-n", 2, "--by",
               "tenant,request_id", "--drop-labels", "request_id")
    out = proc.stdout.decode()
    rows = [m.groups() for m in map(TOP_ROW.match, out.splitlines()) if m]
    assert rows, out
    assert {t for t, _ in rows} & TENANTS, out
    assert {r for _, r in rows} == {"(not set)"}, out


def pprof_keys(path):
    """The label keys of a gzipped pprof file, read back by labelprof convert."""
    doc = path.with_suffix(".json")
    run(LABELPROF, "convert", path, "--format", "json", "-o", doc)
    return set().union(set(), *(k for k, _ in json_label_sets(doc)))


def test_agent_config_and_reload(tmp_path, demo):
    from test_agent import agent, files_of, wait_for
    out = tmp_path / "profiles"
    base = f"freq = 99\ninterval = 1s\noutput_dir = {out}\n"
    with agent(tmp_path, base + "drop_labels = request_id\n", "-p", demo.pid) as a:
        wait_for("two intervals", lambda: len(files_of(out)) >= 2, 30)
        before = sorted(files_of(out))
        a.config.write_text(base + "labels = request_id,step\n")
        a.signal(signal.SIGHUP)
        wait_for("the reload", lambda: "reloaded" in a.stderr(), 10)
        wait_for("two more intervals", lambda: len(files_of(out)) >= len(before) + 3, 30)
        assert a.stop() == 0, a.stderr()
        after = sorted(files_of(out))
    assert "label selection changed" in a.stderr(), a.stderr()
    for name in before:
        keys = pprof_keys(out / name)
        assert b"request_id" not in keys and b"tenant" in keys, (name, keys)
    # the first interval after the reload may be the one it ended; the next are new
    newest = pprof_keys(out / after[-2])
    assert newest == {b"request_id"} or newest == {b"request_id", b"step"}, newest


FOLD_LINE = re.compile(r"request_id has (\d+) values, shown as request_id=\* "
                       r"\(--max-label-values 100\)")


def test_report_folds_request_id(request, tmp_path, demo):
    out = tmp_path / "report.txt"
    record(demo, out, "report")
    text = out.read_text()
    m = FOLD_LINE.search(text)
    assert m and int(m.group(1)) > 100, text
    measure(request, f"report: {m.group(0)}")
    assert "req-" not in text, text
    # the other keys are listed value by value
    assert all(t in text for t in TENANTS), text
    # --max-label-values 0: every request listed again (the top ones and a count)
    record(demo, out, "report", "--max-label-values", 0)
    text = out.read_text()
    assert "req-" in text and not FOLD_LINE.search(text), text


def test_folded_folds_and_says_so(tmp_path, demo):
    out = tmp_path / "p.folded"
    proc = record(demo, out, "folded")
    err = proc.stderr.decode()
    assert re.search(r"^labelprof: folded: " + FOLD_LINE.pattern, err, re.M), err
    lines = folded_lines(out)
    with_id = [labels for labels, _ in lines if "request_id" in labels]
    assert with_id and {labels["request_id"] for labels in with_id} == {"*"}, lines[:5]


def test_machine_formats_keep_values(tmp_path, demo):
    out = tmp_path / "p.pb.gz"
    record(demo, out, "pprof")
    doc = tmp_path / "p.json"
    run(LABELPROF, "convert", out, "--format", "json", "-o", doc)
    values = {s["labels"].get("request_id") for s in load_json(doc)["samples"]}
    assert len(values - {None}) > 100 and "*" not in values, len(values)
    # the page lists the folded key, and no request id
    html = tmp_path / "p.html"
    run(LABELPROF, "convert", out, "--format", "html", "-o", html)
    page = html.read_text()
    assert re.search(r'"folded":\[\[\d+,\d+,100\]\]', page), "no folded key in the page"
    assert not re.search(r"req-\d{6}", page)

"""OpenTelemetry thread context (OTEP 4947) and process context (OTEP 4719),
written by libcustomlabels: otel workload threads switch thread contexts every
1-5 ms, burning CPU in one function per context, in a process that publishes
its resource attributes and the attribute key map. Each function's samples
must carry exactly its context's labels (attributes by name, trace and span
ids in hex, the resource attributes) and its share of the CPU time, with the
thread context in a TLSDESC library (otel-lib) and in the executable's own
TLS (otel-exe); trace and span ids arrive as OTLP Links and pprof labels;
hostile records are survived without wrong labels. Per OTEP 4947: a key
index's last entry counts, one the key map does not name is no label, a
record larger than 640 bytes keeps its ids, and the ids do not count against
--max-labels."""

import json
import subprocess

import pytest

from conftest import (ATTRIBUTION_MIN, LABELPROF, check_exit, flags_of, in_function, load_json, record, started,
                      workload)
from test_attribution import check_groundtruth
from test_otlp import Request
from test_top import parse_rows, top_cmd

DURATION = 3
RESOURCE = {"service.name": "otel-groundtruth",
            "service.instance.id": "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
            "deployment.environment.name": "test"}


def otel_argv(variant, report, *extra):
    return [workload(f"otel-{variant}"), "--threads", "2", "--interval", "1000,5000",
            "--output", report, "--wait-stdin", *extra]


def run(cmd, timeout=120):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=timeout)
    assert proc.returncode == 0, (f"`{' '.join(map(str, cmd))}` exited {proc.returncode}: "
                                  f"{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def sources_of(report, fn):
    """The source every label of burn function fn must name in JSON."""
    labels = next(s["labels"] for s in report["sets"] if s["function"] == fn)
    return {k: "otel_process" if k in RESOURCE else "otel_thread" for k in labels}


@pytest.mark.parametrize("variant", ["lib", "exe"])
def test_otel_attribution(request, tmp_path, variant):
    report_path = tmp_path / "otel.json"
    with started(otel_argv(variant, report_path)) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    report = load_json(report_path)
    check_groundtruth(request, rec, report)
    # JSON names each label's source
    seen = 0
    for s in rec.profile.of_pids(report["pid"]):
        if in_function(s, "burn_ctx_0"):
            assert s.get("label_sources") == sources_of(report, "burn_ctx_0"), s
            seen += 1
    assert seen, "no sample of burn_ctx_0"
    # a conversion of the JSON profile keeps the sources
    converted = tmp_path / "converted.json"
    run([LABELPROF, "convert", rec.out, "--format", "json", "-o", converted])
    again = [s for s in load_json(converted)["samples"] if in_function(s, "burn_ctx_0")]
    assert again and all(s.get("label_sources") == sources_of(report, "burn_ctx_0")
                         for s in again), again[:3]


def test_otel_hostile(request, tmp_path):
    """Garbage pointers, a record of 1200 bytes, valid = 0, an entry cut short,
    a short record at the end of its mapping: no crash, exactly the labels that
    can be trusted (the large record's ids and the attributes in its first 640
    bytes, flagged truncated), and the faults counted."""
    report_path = tmp_path / "otel.json"
    with started(otel_argv("lib", report_path, "--hostile")) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    report = load_json(report_path)
    check_groundtruth(request, rec, report)
    counters = rec.profile.counters
    assert counters["label_read_faults"] > 0, counters
    assert counters["malformed_labels"] > 0, counters
    fn = {s["name"]: s["function"] for s in report["sets"]}
    for s in rec.profile.of_pids(report["pid"]):
        if in_function(s, fn["garbage_pointer"]):
            assert "read_fault" in flags_of(s), s
        if in_function(s, fn["entry_cut_short"]):
            assert "malformed" in flags_of(s), s
        if in_function(s, fn["large_record"]):
            assert "truncated" in flags_of(s) and "malformed" not in flags_of(s), s


def test_otel_ids_beyond_max_labels(request, tmp_path):
    """--max-labels 2: every context still carries its trace and span ids and
    up to two attributes (a repeated key index counts once)."""
    report_path = tmp_path / "otel.json"
    with started(otel_argv("lib", report_path)) as wl:
        rec = record(tmp_path, "--max-labels", 2, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    check_groundtruth(request, rec, load_json(report_path))


def test_otel_otlp_links_and_pprof_labels(tmp_path):
    """Trace and span ids: Links in OTLP, trace_id/span_id labels in pprof;
    the process context's attributes: the process's OTLP resource."""
    report_path = tmp_path / "otel.json"
    otlp, pprof = tmp_path / "cpu.otlp", tmp_path / "cpu.pb.gz"
    with started(otel_argv("lib", report_path)) as wl:
        run([LABELPROF, "record", "-p", wl.pid, "-d", DURATION, "--format", "otlp", "-o", otlp])
        run([LABELPROF, "record", "-p", wl.pid, "-d", DURATION, "--format", "pprof", "-o",
             pprof])
    check_exit(wl)
    report = load_json(report_path)
    ctx0 = next(s["labels"] for s in report["sets"] if s["function"] == "burn_ctx_0")

    req = Request(otlp.read_bytes())
    resources = [res for res, _p in req.profiles()]
    assert len(resources) == 1 and resources[0]["process.pid"] == report["pid"], resources
    for k, v in RESOURCE.items():
        assert resources[0].get(k) == v, resources[0]
    linked = total = 0
    for _res, p in req.profiles():
        for s in p["samples"]:
            if "burn_ctx_0" not in req.functions(s.get("stack_index", 0)):
                continue
            total += s["values"][0]
            link = req.table("link_table")[s.get("link_index", 0)]
            keys = {req.attr(a)[0] for a in s.get("attribute_indices", [])}
            assert not keys & {"trace_id", "span_id", "service.name"}, keys
            if link.get("trace_id", b"").hex() == ctx0["trace_id"] and \
                    link.get("span_id", b"").hex() == ctx0["span_id"] and "http.route" in keys:
                linked += s["values"][0]
    assert total > 0, "no sample of burn_ctx_0 in the OTLP profile"
    assert linked >= ATTRIBUTION_MIN * total, f"{linked}/{total} of burn_ctx_0 linked to its span"

    converted = tmp_path / "pprof.json"
    run([LABELPROF, "convert", pprof, "--format", "json", "-o", converted])
    found = right = 0
    for s in load_json(converted)["samples"]:
        if in_function(s, "burn_ctx_0"):
            found += s["count"]
            labels = s["labels"]
            right += s["count"] * (labels.get("trace_id") == ctx0["trace_id"] and
                                   labels.get("span_id") == ctx0["span_id"] and
                                   labels.get("service.name") == RESOURCE["service.name"])
    assert found, "no sample of burn_ctx_0 in the pprof profile"
    assert right >= ATTRIBUTION_MIN * found, f"{right}/{found} of burn_ctx_0 with its ids"


@pytest.mark.parametrize("variant", ["lib", "exe"])
def test_otel_labels_and_inspect(tmp_path, variant):
    """labelprof labels and inspect show the OpenTelemetry sources."""
    report_path = tmp_path / "otel.json"
    with started(otel_argv(variant, report_path)) as wl:
        doc = json.loads(run([LABELPROF, "labels", wl.pid, "--json"]))
        insp = json.loads(run([LABELPROF, "inspect", wl.pid, "--json"]))
        text = run([LABELPROF, "inspect", wl.pid]).decode()
    check_exit(wl)
    assert doc["otel_thread"], doc
    assert len(doc["threads"]) == 3, doc
    for t in doc["threads"]:
        for k, v in RESOURCE.items():
            assert t["labels"].get(k) == v and t["label_sources"][k] == "otel_process", t
    assert insp["otel_thread"]["ref"] is not None, insp
    assert insp["otel_thread"]["case"] == ("tlsdesc_static" if variant == "lib" else "exe_static")
    assert insp["otel_process"]["resource"] == RESOURCE, insp
    assert insp["otel_process"]["key_map"] == ["http.route", "tenant", "user.id", "db.system"]
    assert "OpenTelemetry thread context" in text and "OpenTelemetry process context" in text


def test_otel_top_by_resource_and_attribute(tmp_path):
    """top groups by the process context's resource attributes and by thread
    context attributes like by any label."""
    report_path = tmp_path / "otel.json"
    with started(otel_argv("lib", report_path)) as wl:
        proc = subprocess.run(top_cmd(wl.pid, "--by", "service.name,tenant", "-n", 2,
                                      "--interval", 2),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    check_exit(wl)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert "by service.name,tenant" in out, out
    rows = parse_rows(out, 2)
    values = {v for v, _, samples, _ in rows if samples}
    # every sample of the process carries service.name; tenant only inside contexts 0-2
    assert {v[0] for v in values} == {RESOURCE["service.name"]}, rows
    assert {v[1] for v in values} >= {"acme", "globex", "(not set)"}, rows

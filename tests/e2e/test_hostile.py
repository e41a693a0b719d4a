"""Hostile label sets: NULL and unmapped pointers, absurd counts and lengths,
NULL keys and values, duplicate keys, a set rewritten while it is sampled,
bytes that are not UTF-8, labels over the length limits, strings packed up to
an unreadable page, strings pages apart, sets whose read faults part way (no
label of the set, neither the labels before the fault nor a later duplicate's
value). One hostile process
runs every mode in its own thread and burn function; its report says what a
correct reader may and must attribute in each. labelprof must survive, count
the problems, and never invent a label."""

import pytest

import subprocess

from conftest import (ATTRIBUTION_MIN, LABELPROF, as_bytes, check_exit, count, flags_of,
                      in_function, labels_of, load_json, measure, record, started, workload)

DURATION = 3
COMMON_MODES = ["clean", "null-storage", "huge-count", "unmapped-storage", "huge-lengths",
                "null-values", "null-keys", "unused-values", "duplicates", "rewrite", "non-utf8",
                "long", "window-fault", "scattered", "fault-duplicate", "fault-first"]
# The v1 ABI publishes a pointer to the set, which can itself be bad.
MODES = {"hostile": COMMON_MODES + ["null-set", "unmapped-set"], "hostile-v0": COMMON_MODES}
BINARIES = sorted(MODES)
MIN_SAMPLES = 20
COUNTER_OF_FLAG = {"read_fault": "label_read_faults", "truncated": "truncations",
                   "malformed": "malformed_labels"}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """One recording of every mode per binary, shared by the tests:
    hostile_run(binary) -> (report, recording)."""
    runs = {}

    def run(binary):
        if binary not in runs:
            try:
                tmp_path = tmp_path_factory.mktemp(binary)
                report_path = tmp_path / "hostile.json"
                with started([workload(binary), "--wait-stdin", "--output", report_path]) as wl:
                    rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
                check_exit(wl)
                runs[binary] = load_json(report_path), rec
            except BaseException as e:
                # Fail every test of the binary the same way, without rerunning.
                runs[binary] = e
        if isinstance(runs[binary], BaseException):
            raise runs[binary]
        return runs[binary]

    return run


def matches(entry, key, value):
    """Whether a reported (key, value) is what entry allows; a prefix where the
    workload published an over-long or absurd length."""
    want_key, want_value = as_bytes(entry["key"]), as_bytes(entry["value"])
    key_ok = key == want_key or (entry["key_prefix"] and key and want_key.startswith(key))
    value_ok = value == want_value or (entry["value_prefix"] and want_value.startswith(value))
    return (key_ok and value_ok and len(key) >= entry.get("min_key_len", 0)
            and len(value) >= min(entry.get("min_value_len", 0), len(want_value)))


@pytest.mark.parametrize("binary", BINARIES)
def test_survives(hostile_run, binary):
    report, rec = hostile_run(binary)
    assert rec.returncode == 0, rec.describe()
    prof = rec.profile
    assert prof.duration_ns >= 0.9 * DURATION * 1e9, f"recording cut short: {prof.duration_ns} ns"
    assert count(prof.of_pids(report["pid"])) > 0
    assert sorted(m["mode"] for m in report["modes"]) == sorted(MODES[binary])


@pytest.mark.parametrize("binary", BINARIES)
def test_counters(hostile_run, binary):
    """Each kind of problem some mode causes is counted."""
    report, rec = hostile_run(binary)
    counters = rec.profile.counters
    for flag, counter in COUNTER_OF_FLAG.items():
        if any(flag in m["flags_expected"] for m in report["modes"]):
            assert counters[counter] > 0, f"{counter} is 0: {counters}"


@pytest.mark.parametrize("binary,mode", [(b, m) for b in BINARIES for m in MODES[b]])
def test_mode(request, hostile_run, binary, mode):
    report, rec = hostile_run(binary)
    spec = next(m for m in report["modes"] if m["mode"] == mode)
    samples = [s for s in rec.profile.of_pids(report["pid"]) if in_function(s, spec["function"])]
    total = count(samples)
    assert total >= MIN_SAMPLES, f"only {total} samples in {spec['function']}"

    invented, forbidden, complete, flagged = [], [], 0, 0
    for s in samples:
        labels, flags = labels_of(s), flags_of(s)
        if any(not any(matches(e, k, v) for e in spec["allowed"]) for k, v in labels):
            invented.append((s.get("labels"), sorted(flags)))
        if flags & set(spec["flags_forbidden"]):
            forbidden.append(sorted(flags))
        if all(any(matches(e, k, v) for k, v in labels) for e in spec["required"]):
            complete += s["count"]
        if not spec["flags_expected"] or flags & set(spec["flags_expected"]):
            flagged += s["count"]
    measure(request, f"{total} samples, {complete} with the required labels, "
                     f"{flagged} with the expected flags")

    assert not invented, f"labels that were never legitimately set: {invented[:3]}"
    assert not forbidden, f"flags {spec['flags_forbidden']} raised: {forbidden[:3]}"
    assert complete >= ATTRIBUTION_MIN * total, (
        f"{complete}/{total} samples carry the required labels {spec['required']!r:.300}")
    assert flagged >= ATTRIBUTION_MIN * total, (
        f"{flagged}/{total} samples carry one of the flags {spec['flags_expected']}")


@pytest.mark.parametrize("binary", BINARIES)
def test_unused_values_are_quiet(hostile_run, binary):
    """A NULL value of length 0 is a label the writer keeps but does not use now (the
    Datadog Java profiler's reserved span labels before a span is set): each one is
    counted in null_values (test_mode checks that no sample is flagged for it)."""
    report, rec = hostile_run(binary)
    counters = rec.profile.counters
    spec = next(m for m in report["modes"] if m["mode"] == "unused-values")
    samples = [s for s in rec.profile.of_pids(report["pid"]) if in_function(s, spec["function"])]
    # two such labels in every sample of the mode (other modes have none)
    assert counters["null_values"] >= 2 * count(samples) > 0, counters


@pytest.mark.parametrize("binary", BINARIES)
def test_labels_unused_values(tmp_path, binary):
    """`labels PID` reports the thread as ok with its two labels in use, no malformed."""
    report_path = tmp_path / "hostile.json"
    with started([workload(binary), "--wait-stdin", "--output", report_path,
                  "unused-values"]) as wl:
        proc = subprocess.run([str(LABELPROF), "labels", str(wl.pid)], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=60)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    tid = load_json(report_path)["modes"][0]["tid"]
    line = next(l for l in out.splitlines() if l.startswith(f"tid {tid} "))
    assert line.endswith(": ok, 2 labels"), out
    assert "malformed" not in out, out
    assert "  endpoint=checkout" in out and "  tenant=acme" in out, out

"""Attribution against ground truth: groundtruth threads switch label sets every
1-5 ms, burning CPU in one function per set, and report the CPU each set used.
Every TLS case is covered: ABI v0 and v1, each linked into the executable,
loaded at startup, or dlopen()ed."""

import time

import pytest

from conftest import (ATTRIBUTION_MIN, CAPTURE_MIN, check_exit, count, label_set, labels_of,
                      load_json, measure, overlap_fraction, record, recording, started,
                      which_function, workload)

VARIANTS = [f"v{abi}-{linkage}" for abi in (1, 0) for linkage in ("exe", "lib", "dlopen")]
DURATION = 3
# A set's share of the samples vs its share of the measured CPU time.
SHARE_TOLERANCE = 0.03


def groundtruth_argv(variant, report):
    return [workload(f"groundtruth-{variant}"), "--threads", "2", "--interval", "1000,5000",
            "--output", report]


def expected_cpu(report, window_start, window_end):
    """CPU ns per burn function inside the recording window."""
    cpu = {}
    names = {s["id"]: s["function"] for s in report["sets"]}
    for _tid, k, start, end, cpu_ns in report["intervals"]:
        fn = names[k] if k >= 0 else report["unlabelled"]["function"]
        cpu[fn] = cpu.get(fn, 0) + cpu_ns * overlap_fraction(start, end, window_start, window_end)
    return cpu


def check_groundtruth(request, rec, report):
    prof = rec.profile
    expected = {s["function"]: label_set(s["labels"]) for s in report["sets"]}
    # labels a process shows on every sample (its OTel process context's), if any
    expected[report["unlabelled"]["function"]] = label_set(report["unlabelled"].get("labels", {}))
    samples = prof.of_pids(report["pid"])

    right = dict.fromkeys(expected, 0)
    total = dict.fromkeys(expected, 0)
    wrong = []
    for s in samples:
        fn = which_function(s, expected)
        if fn is None:
            continue
        total[fn] += s["count"]
        if labels_of(s) == expected[fn]:
            right[fn] += s["count"]
        else:
            wrong.append((fn, s["count"], s.get("labels"), s.get("flags")))

    cpu = expected_cpu(report, prof.start_ns, prof.start_ns + prof.duration_ns)
    cpu_total = sum(cpu.values())
    sampled = sum(total.values())
    expected_samples = prof.frequency * cpu_total / 1e9
    captured = count(samples)
    measure(request, f"{captured} samples, {captured / max(expected_samples, 1):.1%} of "
                     f"{expected_samples:.0f} expected; {sum(right.values())}/{sampled} in burn "
                     f"functions correctly labelled")

    assert sampled > 0, "no sample in any burn function: are the stacks symbolized?"
    assert cpu_total > 0, "the workload burned no CPU inside the recording's time window"
    for fn in expected:
        assert total[fn] > 0, f"no sample in {fn}"
        share = right[fn] / total[fn]
        assert share >= ATTRIBUTION_MIN, (
            f"{fn}: {right[fn]}/{total[fn]} samples carry exactly its labels "
            f"{sorted(expected[fn])}; wrong: {wrong[:5]}")
    for fn in expected:
        sample_share = total[fn] / sampled
        cpu_share = cpu.get(fn, 0) / cpu_total
        assert abs(sample_share - cpu_share) <= SHARE_TOLERANCE, (
            f"{fn}: {sample_share:.1%} of the samples but {cpu_share:.1%} of the CPU time")
    assert captured >= CAPTURE_MIN * expected_samples, (
        f"{captured} samples of the workload, expected about {expected_samples:.0f} "
        f"({prof.frequency} Hz x {cpu_total / 1e9:.2f} CPU s); counters {prof.counters}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_attribution_pid(request, tmp_path, variant):
    """labelprof -p PID on a running workload."""
    report_path = tmp_path / "groundtruth.json"
    with started(groundtruth_argv(variant, report_path) + ["--wait-stdin"]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    check_groundtruth(request, rec, load_json(report_path))


@pytest.mark.parametrize("variant", VARIANTS)
def test_attribution_command(request, tmp_path, variant):
    """labelprof -- COMMAND: the workload is profiled from its first instruction.
    It sets itself up (the dlopen builds load the library then) and waits a
    moment before its threads start switching labels: the time labelprof takes to
    inspect a process whose mappings changed, a second even in a sanitized build."""
    report_path = tmp_path / "groundtruth.json"
    argv = groundtruth_argv(variant, report_path) + ["--duration", DURATION,
                                                     "--start-delay-ms", "1000"]
    rec = record(tmp_path, "--", *argv)
    report = load_json(report_path)
    check_groundtruth(request, rec, report)


def test_target_exits(request, tmp_path):
    """The profiled process exits mid-recording: labelprof stops by itself and
    still attributes and symbolizes what it sampled."""
    report_path = tmp_path / "groundtruth.json"
    with started(groundtruth_argv("v1-lib", report_path) + ["--wait-stdin"]) as wl:
        with recording(tmp_path, "-p", wl.pid) as rec:
            time.sleep(DURATION)
            wl.stop()
            stopped = rec.wait(timeout=20)
    check_exit(wl)
    assert stopped, "labelprof kept recording after its target exited"
    check_groundtruth(request, rec, load_json(report_path))

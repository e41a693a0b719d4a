"""Threads whose TLS is not their own: an io_uring SQPOLL thread (iou-sqp-PID)
and io-wq workers (iou-wrk-PID) start with the thread pointer of the thread
that created them, so reading "their" labels reads that thread's labels as
they are now. The uring workload's main thread sets tenant=main and keeps an
SQPOLL ring busy with nops and async reads; the workers' samples must carry
no thread labels (only the process context's resource attributes) and the
worker flag, the main thread's its labels, and `labelprof labels` must say
what the workers are."""

import json
import subprocess

from conftest import (ATTRIBUTION_MIN, LABELPROF, as_bytes, check_exit, flags_of,
                      labels_of, load_json, measure, record, started, workload)

DURATION = 3
WORKER_PREFIXES = ("iou-sqp-", "iou-wrk-")
# Enough samples of each kind of worker for the check to mean something: the
# poll thread spins for most of the recording, io-wq serves a read of 1 MiB
# of /dev/zero at a time (measured on 2 loaded CPUs: 1000-1700 and 350-550
# in 3 s at 999 Hz).
MIN_SAMPLES = {"iou-sqp-": 200, "iou-wrk-": 20}


def uring(report_path):
    return started([workload("uring"), "-w", "-o", report_path])


def kind(comm):
    return next((p for p in WORKER_PREFIXES if comm.startswith(p)), None)


def test_workers_carry_no_thread_labels(request, tmp_path):
    report_path = tmp_path / "uring.json"
    with uring(report_path) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
    check_exit(wl)
    report = load_json(report_path)
    resource = {(as_bytes(k), as_bytes(v)) for k, v in report["resource"].items()}
    main_labels = {(as_bytes(k), as_bytes(v)) for k, v in report["labels"].items()}
    seen = dict.fromkeys(WORKER_PREFIXES, 0)
    wrong, unflagged = [], []
    main_total = main_right = 0
    for s in rec.profile.of_pids(report["pid"]):
        k = kind(s["comm"])
        if k:
            seen[k] += s["count"]
            # thread labels of any source; the process context's still apply
            if labels_of(s) != resource:
                wrong.append((s["comm"], s["count"], s.get("labels"), sorted(flags_of(s))))
            if "worker" not in flags_of(s):
                unflagged.append((s["comm"], sorted(flags_of(s))))
        elif s["comm"] == report["comm"]:
            main_total += s["count"]
            if labels_of(s) == main_labels | resource:
                main_right += s["count"]
    measure(request, f"iou-sqp {seen['iou-sqp-']}, iou-wrk {seen['iou-wrk-']} samples, "
                     f"{sum(n for _, n, _, _ in wrong)} of them with thread labels; main thread "
                     f"{main_right}/{main_total} with its labels")

    assert not wrong, f"worker samples with labels not their own: {wrong[:5]}"
    assert not unflagged, f"worker samples without the worker flag: {unflagged[:5]}"
    for k, n in MIN_SAMPLES.items():
        assert seen[k] >= n, f"only {seen[k]} samples of {k}PID threads (at least {n} needed)"
    assert main_total > 0, "no sample of the main thread"
    assert main_right >= ATTRIBUTION_MIN * main_total, (
        f"{main_right}/{main_total} main thread samples carry {sorted(main_labels)}")


def test_labels_names_workers(tmp_path):
    """`labelprof labels PID`: the workers are said to be workers, without thread labels."""
    report_path = tmp_path / "uring.json"
    with uring(report_path) as wl:
        proc = subprocess.run([str(LABELPROF), "labels", str(wl.pid), "--json"],
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
        text = subprocess.run([str(LABELPROF), "labels", str(wl.pid)], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=60)
    check_exit(wl)
    report = load_json(report_path)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    doc = json.loads(proc.stdout)
    threads = {t["tid"]: t for t in doc["threads"]}
    workers = [t for t in threads.values() if kind(t["comm"]) == "iou-sqp-"]
    assert workers, f"no iou-sqp thread listed: {doc}"
    for t in threads.values():
        if kind(t["comm"]):
            assert t["status"] == "worker" and "worker" in t["flags"], t
            assert t["labels"] == report["resource"], t
            assert set(t["label_sources"].values()) <= {"otel_process"}, t
        elif t["comm"] == report["comm"]:
            assert t["status"] == "ok", t
            assert t["labels"] == {**report["labels"], **report["resource"]}, t
    out = text.stdout.decode(errors="replace")
    assert text.returncode == 0, text.stderr.decode(errors="replace")
    line = next(l for l in out.splitlines() if " comm iou-sqp-" in l)
    assert ": worker (an io_uring or kernel (vhost) worker" in line, out

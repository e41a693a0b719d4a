"""The bundled demo workload, profiled the way `make demo` does: each request
function's samples carry the tenant, endpoint and request labels of the
request being served."""

import re

from conftest import (ATTRIBUTION_MIN, check_exit, count, in_function, labels_of, measure, record,
                      started, workload)

TENANTS = {b"acme", b"globex", b"initech"}
# Labels every sample in the function must carry, besides tenant and request_id.
EXPECTED = {
    "hash_password": {b"endpoint": b"/login"},
    "search_index": {b"endpoint": b"/search"},
    "compute_tax": {b"endpoint": b"/checkout", b"step": b"tax"},
}


def request_labels_ok(labels, want):
    d = dict(labels)
    return (d.get(b"tenant") in TENANTS and re.fullmatch(rb"req-\d{6,}", d.get(b"request_id", b""))
            and all(d.get(k) == v for k, v in want.items())
            and set(d) == {b"tenant", b"endpoint", b"request_id"} | set(want))


def test_demo(request, tmp_path):
    # As scripts/demo.sh does it: the service runs, labelprof attaches to it.
    with started([workload("demo"), "--duration", 60, "--threads", 2, "--quiet"]) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=2)
        wl.proc.terminate()
    check_exit(wl)
    samples = rec.profile.of_pids(wl.pid)
    for fn, want in EXPECTED.items():
        in_fn = [s for s in samples if in_function(s, fn)]
        good = [s for s in in_fn if request_labels_ok(labels_of(s), want)]
        measure(request, f"{fn}: {count(good)}/{count(in_fn)} samples labelled")
        assert count(in_fn) > 0, f"no sample in {fn}"
        assert count(good) >= ATTRIBUTION_MIN * count(in_fn), (
            f"{fn}: {count(good)}/{count(in_fn)} samples carry {want} and a tenant and request "
            f"id; e.g. {[s.get('labels') for s in in_fn if s not in good][:3]}")

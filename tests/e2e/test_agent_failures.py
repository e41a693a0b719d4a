"""labelprof agent (docs/agent.md) when what it writes to fails: an OTLP
endpoint that refuses the data (HTTP 400), a full disk under output_dir and
under spool_dir (a small tmpfs the test mounts in its tmp dir), and a restart
with intervals left in the spool. The endpoint is test_agent's receiver on
127.0.0.1, the workload the labelled demo.

What must hold: a refused request is dropped, never sent again, counted and
logged once, and the intervals around it arrive once and in order; a full
disk costs a metric and a log line, never the agent, never a partial file
taken for a whole one, and never an interval the endpoint could take; the
intervals a stopped agent left in its spool arrive first, once and in order,
at the next start."""

import re

from test_agent import agent, check_order, demo, free_port, metrics, receiver, wait_for


def status_pb(message):
    """A google.rpc.Status (code 3, INVALID_ARGUMENT), the error body of OTLP/HTTP."""
    text = message.encode()
    assert len(text) < 128
    return b"\x08\x03\x12" + bytes([len(text)]) + text


def test_agent_refused_request_dropped(tmp_path):
    port = free_port()
    spool = tmp_path / "spool"
    with demo() as wl, receiver() as rcv:
        rcv.status = 400
        rcv.reply = (status_pb("profiles: unknown sample type"), "application/x-protobuf")
        config = (f"freq = 99\ninterval = 1s\notlp_endpoint = {rcv.url}\nspool_dir = {spool}\n"
                  "otlp_retry_initial = 100ms\notlp_retry_max = 200ms\n"
                  f"metrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config, "-p", wl.pid) as a:
            wait_for("three refusals", lambda: len(rcv.refused()) >= 3, 30)
            rcv.status = 200
            wait_for("two deliveries", lambda: len(rcv.accepted()) >= 2, 30)
            # every refusal counted (once the one in flight at the switch is answered)
            wait_for("the counters to agree with the receiver",
                     lambda: metrics(port)["labelprof_export_rejected_total"]
                     == len(rcv.refused()), 10)
            m = metrics(port)
            assert m["labelprof_spool_dropped_total"] == len(rcv.refused()), m
            assert m["labelprof_export_failure_total"] == len(rcv.refused()), m
            assert a.stop() == 0, a.stderr()

    refused = rcv.refused()
    assert all(r.status == 400 for r in refused)
    # each interval sent once, in order, none missing: a refused one is not sent again
    check_order(rcv.requests)
    assert len(rcv.requests) == a.intervals_at_exit(), a.stderr()
    assert not [p for p in spool.iterdir()], "left in the spool"
    # one line for all the refusals of the minute, with the status and the reply's message
    lines = [line for line in a.stderr().splitlines() if "refused" in line]
    assert len(lines) == 1, a.stderr()
    assert re.search(r"/v1development/profiles refused the profile of \d{8}T\d{6}\.\d{3}Z: "
                     r"HTTP 400: profiles: unknown sample type; dropped, not retried$",
                     lines[0]), lines
    assert not re.search(r"dropped \d+ interval", a.stderr()), a.stderr()

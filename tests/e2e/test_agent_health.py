"""The agent's own figures agree: samples with labels and label read faults
are parts of the samples received in every scrape, intervals lost at exit
are counted as dropped; /healthz says whether sampling runs and export keeps
up (200, or 503 and why), /livez whether sampling runs."""

import json
import re
import signal
import socket
import time
import urllib.error
import urllib.request

from test_agent import agent, demo, free_port, metrics, receiver, wait_for


def health(port, path="/healthz"):
    """(HTTP status, the JSON body)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            assert resp.headers["Content-Type"] == "application/json"
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        assert e.headers["Content-Type"] == "application/json"
        return e.code, json.loads(e.read())


def test_parts_never_exceed_the_whole(tmp_path):
    """Every sample of the demo carries labels: counted at different times (the
    BPF counter when sampled, the total when received), with labels ran ahead."""
    port = free_port()
    with demo() as wl:
        config = (f"freq = 999\ninterval = 1s\noutput_dir = {tmp_path}/out\n"
                  f"metrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config, "-p", wl.pid) as a:
            scrapes = []
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline:
                scrapes.append(metrics(port))
                time.sleep(0.15)
            assert a.stop() == 0, a.stderr()
    assert scrapes[-1]["labelprof_samples_with_labels_total"] > 0, scrapes[-1]
    for m in scrapes:
        samples = m["labelprof_samples_total"]
        assert m["labelprof_samples_with_labels_total"] <= samples, m
        assert m["labelprof_label_read_faults_total"] <= samples, m


def test_lost_at_exit_counts_as_dropped(tmp_path):
    """With the endpoint down and the spool in memory, the intervals lost at
    exit are the ones the stop line counts as dropped."""
    port = free_port()
    config = (f"freq = 99\ninterval = 1s\notlp_endpoint = http://127.0.0.1:{free_port()}\n"
              "otlp_timeout = 1s\notlp_retry_initial = 200ms\notlp_retry_max = 500ms\n"
              f"metrics_listen = 127.0.0.1:{port}\n")
    with agent(tmp_path, config) as a:
        wait_for("two intervals waiting",
                 lambda: metrics(port)["labelprof_spool_intervals"] >= 2, 30)
        assert a.stop() == 0, a.stderr()
    log = a.stderr()
    lost = re.search(r"(\d+) intervals? not delivered at exit: lost", log)
    assert lost, log
    dropped = re.search(r"stopped: .* (\d+) intervals? dropped", log)
    assert dropped and dropped.group(1) == lost.group(1), log


def test_healthz(tmp_path):
    port = free_port()
    with receiver() as rcv:
        config = (f"freq = 99\ninterval = 1s\notlp_endpoint = {rcv.url}\n"
                  "otlp_timeout = 1s\notlp_retry_initial = 200ms\notlp_retry_max = 500ms\n"
                  f"output_dir = {tmp_path}/out\nmetrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config) as a:
            wait_for("an interval delivered", lambda: rcv.accepted(), 30)
            status, body = health(port)
            assert status == 200 and body["status"] == "ok" and body["sampling"], body
            assert not body["export_behind"] and not body["output_dir_failing"], body

            # the endpoint refuses for longer than three intervals: export is behind
            rcv.status = 503
            wait_for("export behind", lambda: health(port)[0] == 503, 30)
            status, body = health(port)
            assert body["sampling"] and body["export_behind"], body
            assert body["oldest_waiting_seconds"] >= 3, body
            assert health(port, "/livez")[0] == 200

            rcv.status = 200
            wait_for("export caught up", lambda: health(port)[0] == 200, 30)
            assert a.stop() == 0, a.stderr()


def test_healthz_once_sampling_stopped(tmp_path):
    """At shutdown the last request may hang until otlp_timeout: sampling has stopped."""
    port = free_port()
    with socket.socket() as hang:
        hang.bind(("127.0.0.1", 0))
        hang.listen(16)  # never accepts: requests hang
        config = (f"freq = 99\ninterval = 1s\n"
                  f"otlp_endpoint = http://127.0.0.1:{hang.getsockname()[1]}\n"
                  "otlp_timeout = 6s\notlp_retry_initial = 10s\n"
                  f"metrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config) as a:
            assert health(port, "/livez")[0] == 200
            a.signal(signal.SIGTERM)
            wait_for("sampling stopped", lambda: health(port, "/livez")[0] == 503, 5)
            status, body = health(port, "/livez")
            assert status == 503 and not body["sampling"], body
            assert health(port)[0] == 503
            a.proc.wait(timeout=30)

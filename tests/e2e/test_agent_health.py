"""The agent's own figures agree: samples with labels and label read faults
are parts of the samples received in every scrape, intervals lost at exit
are counted as dropped."""

import re
import time

from test_agent import agent, demo, free_port, metrics, wait_for


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

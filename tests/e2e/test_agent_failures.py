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

import contextlib
import errno
import gzip
import os
import re
import subprocess

from test_agent import (NAME, agent, check_order, decode_otlp, decode_pprof, demo, files_of,
                        free_port, metrics, receiver, wait_for)


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


@contextlib.contextmanager
def tmpfs(path, size):
    """A tmpfs of size (mount's syntax) at path, created, unmounted at the end."""
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
                   check=True, timeout=30)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True, timeout=30)


def fill(disk):
    """Fills the file system of directory disk up; returns the file that fills it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)
    # not even a page is left
    fd = os.open(filler, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"\0")
        raise AssertionError(f"{disk} is not full")
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)
    return filler


def log_lines(a, pattern):
    return [line for line in a.stderr().splitlines() if re.search(pattern, line)]


def test_agent_output_dir_full(tmp_path):
    port = free_port()
    with tmpfs(tmp_path / "disk", "4m") as disk, demo() as wl:
        out = disk / "profiles"
        out.mkdir()
        filler = fill(disk)
        config = (f"freq = 99\ninterval = 1s\noutput_dir = {out}\nformats = pprof,otlp\n"
                  f"max_dir_bytes = 0\nmetrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config, "-p", wl.pid) as a:
            wait_for("three intervals' failures",
                     lambda: metrics(port)["labelprof_file_write_failure_total"] >= 6, 30)
            # no profile, partial or not, and the temporary files go
            assert not files_of(out)
            wait_for("no temporary file", lambda: not os.listdir(out), 10)
            assert a.proc.poll() is None
            filler.unlink()
            wait_for("the writes to resume", lambda: log_lines(a, "writing profiles to"), 30)
            wait_for("an interval written", lambda: len(files_of(out)) >= 2, 30)
            failures = metrics(port)["labelprof_file_write_failure_total"]
            assert a.stop() == 0, a.stderr()

        files = files_of(out)
        # every profile is whole on disk or counted as a failure
        assert len(files) + failures == 2 * a.intervals_at_exit(), (files, failures, a.stderr())
        assert not [n for n in os.listdir(out) if n not in files], "temporary files left"
        # whole profiles, with the demo's labels (the last, partial interval may have no sample)
        assert all(NAME.match(n) for n in files), files
        newest = max(NAME.match(n).group(1) for n in files)
        for name in files:
            body = (out / name).read_bytes()
            text = decode_pprof(body) if name.endswith(".pb.gz") else decode_otlp(body)
            assert '"tenant"' in text or NAME.match(name).group(1) == newest, name
    # one line when the failures start, one when they end
    first = log_lines(a, "^labelprof: cannot write profiles")
    assert len(first) == 1, a.stderr()
    assert re.search(rf"cannot write profiles to {re.escape(str(out))}: labelprof-\S+-"
                     r"\d{8}T\d{6}\.\d{3}Z\.pb\.gz: No space left on device$", first[0]), first
    assert log_lines(a, rf"writing profiles to {re.escape(str(out))} again after "
                     rf"{int(failures)} failures$"), a.stderr()


def spool_files(spool):
    """The requests in the spool directory, oldest first (SEQ-TIME.otlp.gz)."""
    names = sorted(n for n in os.listdir(spool) if not n.startswith("."))
    assert all(re.fullmatch(r"\d{16}-\d{20}\.otlp\.gz", n) for n in names), names
    return names


def test_agent_spool_dir_full(tmp_path):
    port = free_port()
    with tmpfs(tmp_path / "disk", "4m") as disk, demo() as wl, receiver() as rcv:
        spool = disk / "spool"
        spool.mkdir(mode=0o700)
        filler = fill(disk)
        config = (f"freq = 99\ninterval = 1s\notlp_endpoint = {rcv.url}\nspool_dir = {spool}\n"
                  "otlp_retry_initial = 100ms\notlp_retry_max = 500ms\n"
                  f"metrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config, "-p", wl.pid) as a:
            # the endpoint still gets every interval, from memory
            wait_for("three intervals", lambda: len(rcv.accepted()) >= 3, 30)
            assert metrics(port)["labelprof_spool_write_failure_total"] >= 3
            # an outage while the disk is full: the requests wait in memory
            rcv.status = 503
            wait_for("two intervals held",
                     lambda: metrics(port)["labelprof_spool_intervals"] >= 2, 30)
            assert not spool_files(spool)
            wait_for("no temporary file", lambda: not os.listdir(spool), 10)
            held = metrics(port)["labelprof_spool_intervals"]
            # room again: the next interval is written, and those held before it
            filler.unlink()
            wait_for("every waiting request on disk",
                     lambda: len(spool_files(spool)) > held
                     and len(spool_files(spool)) == metrics(port)["labelprof_spool_intervals"],
                     30)
            assert log_lines(a, rf"writing requests to the spool {re.escape(str(spool))} again"), \
                a.stderr()
            rcv.status = 200
            wait_for("the spool to empty",
                     lambda: metrics(port)["labelprof_spool_intervals"] == 0, 30)
            m = metrics(port)
            assert m["labelprof_spool_dropped_total"] == 0, m
            assert a.stop() == 0, a.stderr()
        assert not os.listdir(spool)

    delivered = rcv.accepted()
    check_order(delivered)
    assert len(delivered) == a.intervals_at_exit(), a.stderr()
    first = log_lines(a, "^labelprof: cannot write requests")
    assert first == [f"labelprof: cannot write requests to the spool {spool}: No space left on "
                     "device (held in memory until sent)"], a.stderr()


def test_agent_restart_sends_spooled_intervals(tmp_path):
    port = free_port()
    spool = tmp_path / "spool"
    config = (f"freq = 99\ninterval = 1s\notlp_endpoint = http://127.0.0.1:{port}\n"
              f"spool_dir = {spool}\notlp_retry_initial = 100ms\notlp_retry_max = 500ms\n")
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with demo() as wl:
        # nothing listens on the port: every interval stays spooled
        with agent(first, config, "-p", wl.pid) as a:
            wait_for("three intervals spooled", lambda: len(spool_files(spool)) >= 3, 30)
            assert a.stop() == 0, a.stderr()
        names = spool_files(spool)
        assert len(names) == a.intervals_at_exit(), (names, a.stderr())
        assert f"{len(names)} intervals not delivered at exit: kept in the spool" in a.stderr()
        times = [int(n[17:37]) for n in names]
        assert times == sorted(times), names
        spooled = [gzip.decompress((spool / n).read_bytes()) for n in names]

        with receiver(port) as rcv, agent(second, config, "-p", wl.pid) as b:
            assert f"{len(names)} intervals left by the previous run" in b.stderr()
            wait_for("the spooled intervals and two new ones",
                     lambda: len(rcv.accepted()) >= len(names) + 2, 30)
            assert b.stop() == 0, b.stderr()
        assert not spool_files(spool)

    received = rcv.accepted()
    assert len(rcv.requests) == len(received), "a request was refused"
    # the spooled requests first, each once, in interval order, exactly as spooled
    assert [r.body for r in received[:len(names)]] == spooled
    # (a request names its interval's start, unless the interval had no sample)
    assert all(r.time_ns in (t, None) for r, t in zip(received, times)), times
    # then the second run's, after them, each once
    new = received[len(names):]
    assert len(new) == b.intervals_at_exit(), b.stderr()
    check_order(new)
    assert new[0].time_ns > times[-1]

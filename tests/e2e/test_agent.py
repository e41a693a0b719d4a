"""labelprof agent, the continuous profiling daemon (docs/agent.md), against
the labelled demo workload and an OTLP/HTTP receiver run by the test (Python's
http.server on 127.0.0.1). Every request the receiver gets is gunzipped and
decoded with protoc (Debian's protobuf-compiler) against proto/.

What must hold: one profile per interval, each delivered exactly once and in
order (time_unix_nano), with the demo's labels; intervals an outage keeps from
the endpoint are spooled and arrive once it is back; the metrics agree with
what the receiver saw; SIGHUP applies a changed file (and keeps the old
settings when the new file is invalid); SIGTERM sends the partial interval and
exits 0; a hanging endpoint never stops sampling; files in output_dir follow
the retention settings; systemd gets READY/RELOADING/STOPPING/WATCHDOG; the
resource attributes name the container and pod of a process whose cgroup path
says so."""

import contextlib
import gzip
import http.server
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.request
import uuid

import pytest

from conftest import LABELPROF, REPO, started, workload

PROTO = REPO / "proto"
SERVICE_PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
REQUEST = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
TENANTS = {"acme", "globex", "initech"}


def decode_otlp(body):
    """protoc's text form of an ExportProfilesServiceRequest."""
    proc = subprocess.run(["protoc", f"--decode={REQUEST}", "-I", str(PROTO), SERVICE_PROTO],
                          input=body, capture_output=True, cwd=PROTO, timeout=30)
    assert proc.returncode == 0, f"protoc cannot decode a request: {proc.stderr.decode()}"
    return proc.stdout.decode("utf-8", "replace")


def decode_pprof(body):
    """protoc's text form of a gzipped pprof profile."""
    proc = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I", str(PROTO),
                           "pprof/profile.proto"], input=gzip.decompress(body),
                          capture_output=True, cwd=PROTO, timeout=30)
    assert proc.returncode == 0, f"protoc cannot decode a profile: {proc.stderr.decode()}"
    return proc.stdout.decode("utf-8", "replace")


class Request:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        self._text = None

    @property
    def text(self):
        if self._text is None:
            self._text = decode_otlp(self.body)
        return self._text

    @property
    def time_ns(self):
        """The interval's start (every profile of a request has the same); None if empty."""
        times = set(map(int, re.findall(r"time_unix_nano: (\d+)", self.text)))
        assert len(times) <= 1, f"profiles of one request start at {times}"
        return times.pop() if times else None

    @property
    def duration_ns(self):
        durations = set(map(int, re.findall(r"duration_nano: (\d+)", self.text)))
        assert len(durations) <= 1, f"profiles of one request last {durations}"
        return durations.pop() if durations else None

    def strings(self):
        return set(re.findall(r'string_value: "((?:[^"\\]|\\.)*)"', self.text)) | set(
            re.findall(r'string_table: "((?:[^"\\]|\\.)*)"', self.text))


class Receiver:
    """An OTLP/HTTP endpoint on 127.0.0.1 (port 0: any free one): answers `status`
    after `delay` seconds, with `reply` (body, Content-Type) unless the status is
    200, and records every request."""

    def __init__(self, port=0):
        self.lock = threading.Lock()
        self.requests = []
        self.status = 200
        self.delay = 0.0
        self.reply = (b"try later", "text/plain")
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver.lock:
                    status, delay, (reply, content_type) = (receiver.status, receiver.delay,
                                                            receiver.reply)
                if delay:
                    time.sleep(delay)
                assert self.path == "/v1development/profiles", self.path
                if status == 200:
                    reply = b""
                try:
                    self.send_response(status)
                    if reply:
                        self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                # a late answer finds the agent gone (it timed out): not a delivery
                with receiver.lock:
                    receiver.requests.append(Request("late" if delay else status,
                                                     dict(self.headers), body))

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def accepted(self):
        with self.lock:
            return [r for r in self.requests if r.status == 200]

    def refused(self):
        with self.lock:
            return [r for r in self.requests if r.status not in (200, "late")]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def receiver(port=0):
    r = Receiver(port)
    try:
        yield r
    finally:
        r.close()


@contextlib.contextmanager
def demo():
    """The demo service on two threads, stopped with SIGTERM at the end."""
    with started([workload("demo"), "-t", "2", "-q"]) as wl:
        try:
            yield wl
        finally:
            wl.proc.send_signal(signal.SIGTERM)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


class Agent:
    """labelprof agent in the background; its stderr goes to a file."""

    def __init__(self, tmp_path, config, *args, env=None):
        assert LABELPROF.is_file(), f"{LABELPROF} is missing"
        self.config = tmp_path / "agent.conf"
        self.config.write_text(config)
        self.log = tmp_path / "agent.log"
        self.cmd = [str(LABELPROF), "agent", "--config", str(self.config), *map(str, args)]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=log,
                                         env=dict(os.environ, **(env or {})))
        wait_for("the agent to sample", lambda: "labelprof: sampling" in self.stderr()
                 or self.proc.poll() is not None, 60)
        assert self.proc.poll() is None, f"the agent exited: {self.stderr()}"

    def stderr(self):
        return self.log.read_text(errors="replace")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=30):
        """SIGTERM; returns the exit status."""
        self.signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"the agent did not stop within {timeout} s: {self.stderr()}")

    def intervals_at_exit(self):
        m = re.search(r"stopped: (\d+) intervals?,", self.stderr())
        assert m, f"no summary line: {self.stderr()}"
        return int(m.group(1))


@contextlib.contextmanager
def agent(tmp_path, config, *args, env=None):
    a = Agent(tmp_path, config, *args, env=env)
    try:
        yield a
    finally:
        if a.proc.poll() is None:
            a.proc.kill()
            a.proc.wait()


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = resp.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name, value = line.split()
        name = name.split("{")[0]  # labelprof_build_info{version="..."}
        values[name] = float(value)
        family = re.sub(r"_(sum|count)$", "", name)
        if f"# TYPE {family} summary" not in text:
            family = name
        assert f"# TYPE {family} " in text and f"# HELP {family} " in text, name
    return values


def agreeing_metrics(port, rcv):
    """The metrics once their delivery counters agree with what the receiver got
    (a request being answered counts on one side first)."""
    m = {}

    def agree():
        m.update(metrics(port))
        return (m["labelprof_export_success_total"] == len(rcv.accepted())
                and m["labelprof_export_failure_total"] == len(rcv.refused()))

    wait_for("the counters to agree with the receiver", agree, 30)
    return m


def check_order(requests):
    """Accepted requests: distinct intervals, in order, each starting where the
    previous one ended (none missing)."""
    spans = [(r.time_ns, r.duration_ns) for r in requests if r.time_ns is not None]
    assert len(spans) >= len(requests) - 1, "more than one interval without samples"
    times = [t for t, _ in spans]
    assert times == sorted(times), f"delivered out of order: {times}"
    assert len(set(times)) == len(times), f"an interval was delivered twice: {times}"
    for (t, d), (t_next, _) in zip(spans, spans[1:]):
        assert abs(t + d - t_next) < 20_000_000, f"a gap between intervals: {spans}"


def test_agent_otlp_outage_reload_shutdown(tmp_path):
    port = free_port()
    with demo() as wl, receiver() as rcv:
        config = (f"freq = 99\ninterval = 2s\notlp_endpoint = {rcv.url}\notlp_gzip = true\n"
                  "otlp_headers = Authorization=Bearer x,X-Tenant=y\n"
                  f"spool_dir = {tmp_path}/spool\notlp_timeout = 2s\n"
                  "otlp_retry_initial = 200ms\notlp_retry_max = 1s\n"
                  f"metrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config, "-p", wl.pid) as a:
            wait_for("three intervals", lambda: len(rcv.accepted()) >= 3, 30)
            first = rcv.accepted()[0]
            assert first.headers.get("Authorization") == "Bearer x"
            assert first.headers.get("X-Tenant") == "y"
            assert first.headers.get("Content-Type") == "application/x-protobuf"
            assert first.headers.get("Content-Encoding") == "gzip"

            # the endpoint fails for two intervals: they wait in the spool
            before = len(rcv.accepted())
            rcv.status = 503
            wait_for("two intervals spooled",
                     lambda: metrics(port)["labelprof_spool_intervals"] >= 2, 20)
            assert rcv.refused() and metrics(port)["labelprof_spool_bytes"] > 0
            assert len(rcv.accepted()) == before
            assert not list((tmp_path / "spool").glob(".tmp-*"))
            assert list((tmp_path / "spool").glob("*.otlp.gz")), "nothing spooled on disk"
            rcv.status = 200
            wait_for("the spool to empty", lambda: metrics(port)["labelprof_spool_bytes"] == 0,
                     20)
            assert len(rcv.accepted()) >= before + 2

            # counters agree with the receiver
            m = agreeing_metrics(port, rcv)
            assert m["labelprof_samples_total"] > 0 and m["labelprof_spool_dropped_total"] == 0
            assert m["labelprof_samples_with_labels_total"] > 0
            assert m["labelprof_intervals_total"] >= len(rcv.accepted())
            # each process in the table was inspected at least once
            assert m["labelprof_process_inspections_total"] >= m["labelprof_processes_tracked"] > 0
            assert m["process_resident_memory_bytes"] > 0 and m["process_cpu_seconds_total"] > 0
            # each runtime module's counters, its BPF walk's among them
            assert {"labelprof_python_walks_total", "labelprof_hotspot_faults_total",
                    "labelprof_node_js_frames_total"} <= set(m), sorted(m)

            # an invalid file on SIGHUP: the old settings stay
            a.config.write_text(config.replace("interval = 2s", "interval = soon"))
            a.signal(signal.SIGHUP)
            wait_for("the reload error", lambda: "reload failed" in a.stderr(), 10)
            assert f"{a.config}:2: interval: invalid duration 'soon'" in a.stderr()
            n = len(rcv.accepted())
            wait_for("two intervals after it", lambda: len(rcv.accepted()) >= n + 2, 30)
            assert all(r.headers.get("X-Tenant") == "y" for r in rcv.accepted()[n:])

            # a valid one: a new header and a shorter interval
            a.config.write_text(config.replace("interval = 2s", "interval = 1s")
                                .replace("X-Tenant=y", "X-Tenant=z"))
            a.signal(signal.SIGHUP)
            wait_for("the reload", lambda: "reloaded" in a.stderr(), 10)
            n = len(rcv.accepted())
            wait_for("intervals after the reload", lambda: len(rcv.accepted()) >= n + 3, 30)
            last = rcv.accepted()[-2:]
            assert all(r.headers.get("X-Tenant") == "z" for r in last)
            # an interval ends once it lasted the setting: never shorter than the new 1 s,
            # and one at least shorter than the old 2 s could be
            durations = [r.duration_ns / 1e9 for r in last]
            assert all(d >= 1 for d in durations) and min(durations) < 2, \
                f"not 1 s after reload: {durations}"

            # SIGTERM: the partial interval is sent, then exit 0
            n = len(rcv.accepted())
            signalled_ns = time.time_ns()
            assert a.stop() == 0, a.stderr()
            assert len(rcv.accepted()) > n, "the partial interval was not sent"
            # the last one is the interval the signal ended (unless too short to hold a sample)
            last = rcv.accepted()[-1]
            assert last.time_ns is None or \
                last.time_ns + last.duration_ns > signalled_ns - 20_000_000, a.stderr()

        delivered = rcv.accepted()
        check_order(delivered)
        # every interval the agent made was delivered, exactly once
        assert a.intervals_at_exit() == len(delivered), a.stderr()
        # each full interval holds the demo's labelled samples
        for r in delivered[:-1]:
            assert "tenant" in r.strings(), r.text[:2000]
            assert r.strings() & TENANTS, f"no tenant in an interval: {r.text[:2000]}"
        assert TENANTS <= set().union(*(r.strings() for r in delivered))
        assert f"int_value: {wl.pid}" in delivered[0].text
        assert not re.search(r"dropped \d+ interval", a.stderr()), a.stderr()


def test_agent_hanging_endpoint_does_not_stop_sampling(tmp_path):
    port = free_port()
    with demo() as wl, receiver() as rcv:
        rcv.delay = 30  # past otlp_timeout: every request times out
        config = (f"freq = 99\ninterval = 1s\notlp_endpoint = {rcv.url}\notlp_timeout = 3s\n"
                  "otlp_retry_initial = 100ms\notlp_retry_max = 500ms\n"
                  f"metrics_listen = 127.0.0.1:{port}\n")
        with agent(tmp_path, config, "-p", wl.pid) as a:
            wait_for("a first attempt", lambda: metrics(port)["labelprof_intervals_total"] >= 1,
                     20)
            m0 = metrics(port)
            # the loop keeps reading the ring buffer and ending intervals while the sender hangs
            wait_for("four more intervals", lambda: metrics(port)["labelprof_intervals_total"]
                     >= m0["labelprof_intervals_total"] + 4, 30)
            wait_for("a request to time out",
                     lambda: metrics(port)["labelprof_export_failure_total"] >= 1, 30)
            # the others wait in the queue while a request hangs
            wait_for("intervals waiting", lambda: metrics(port)["labelprof_spool_intervals"] >= 2,
                     30)
            m1 = metrics(port)
            assert not rcv.accepted(), "a request was answered in time"
            assert m1["labelprof_samples_total"] > m0["labelprof_samples_total"]
            assert m1["labelprof_ringbuf_drops_total"] == 0
            assert "cannot send a profile" in a.stderr()
            # the endpoint answers again: everything arrives, in order
            rcv.delay = 0
            wait_for("the spool to empty", lambda: metrics(port)["labelprof_spool_bytes"] == 0,
                     30)
            assert a.stop() == 0, a.stderr()
        delivered = rcv.accepted()
        check_order(delivered)
        assert len(delivered) == a.intervals_at_exit(), a.stderr()
        # one line for the first failure, no spam for the next ones
        assert a.stderr().count("cannot send a profile") == 1, a.stderr()
        assert a.stderr().count("still cannot send") <= 1, a.stderr()


def files_of(out):
    """The profiles in out (temporary files being written start with a dot); a file
    retention removes between the listing and its stat is gone."""
    files = {}
    for p in out.iterdir():
        if p.name.startswith("."):
            continue
        try:
            files[p.name] = p.stat()
        except FileNotFoundError:
            continue
    return files


def spread(files):
    """Seconds between the oldest and the newest modification times of files_of()."""
    times = [st.st_mtime for st in files.values()]
    return max(times) - min(times)


def duration_ns(text):
    """duration_nanos of a decoded pprof profile."""
    m = re.search(r"^duration_nanos: (\d+)$", text, re.M)
    return int(m.group(1)) if m else 0


NAME = re.compile(r"^labelprof-[A-Za-z0-9._-]+-(\d{8}T\d{6}\.\d{3}Z)\.(pb\.gz|otlp\.pb)$")


def test_agent_directory_max_age(tmp_path):
    out = tmp_path / "profiles"
    config = f"freq = 99\ninterval = 1s\noutput_dir = {out}\nformats = pprof,otlp\n"
    with demo() as wl:
        with agent(tmp_path, config + "max_age = 1h\n", "-p", wl.pid) as a:
            wait_for("four intervals", lambda: len(files_of(out)) >= 8, 20)
            # a shorter age limit, applied live
            a.config.write_text(config + "max_age = 2s\n")
            a.signal(signal.SIGHUP)
            wait_for("the reload", lambda: "reloaded" in a.stderr(), 10)
            # retention after each interval leaves the files of the last 2 s: measured
            # from the newest one, which it runs right after (four intervals span 3 s)
            wait_for("the files older than max_age to go", lambda: files_of(out) and
                     spread(files_of(out)) < 2.5, 30)
            assert a.stop() == 0, a.stderr()
        files = files_of(out)
    stamps = {}
    for n, st in files.items():
        m = NAME.match(n)
        assert m, f"unexpected file {n}"
        assert st.st_mode & 0o777 == 0o644, f"{n}: mode {st.st_mode & 0o777:o}"
        stamps.setdefault(m.group(1), set()).add(m.group(2))
    # both formats of an interval (retention may have taken one of the oldest pair)
    assert sum(kinds != {"pb.gz", "otlp.pb"} for kinds in stamps.values()) <= 1, stamps
    # a gzipped pprof profile and an OTLP request of the newest whole interval, with the
    # demo's labels (the flush at stop covers the last few ms and may hold no sample)
    whole = [n for n in sorted(files, reverse=True) if n.endswith(".pb.gz")
             and n.replace(".pb.gz", ".otlp.pb") in files
             and duration_ns(decode_pprof((out / n).read_bytes())) >= 0.5e9]
    assert whole, f"no whole interval in both formats among {sorted(files)}"
    assert '"tenant"' in decode_pprof((out / whole[0]).read_bytes())
    assert '"tenant"' in decode_otlp((out / whole[0].replace(".pb.gz", ".otlp.pb")).read_bytes())


def test_agent_directory_size_bound(tmp_path):
    out = tmp_path / "profiles"
    config = f"freq = 99\ninterval = 1s\noutput_dir = {out}\nformats = pprof,otlp\n"
    with demo() as wl:
        with agent(tmp_path, config + "max_dir_bytes = 0\n", "-p", wl.pid) as a:
            wait_for("three intervals", lambda: len(files_of(out)) >= 6, 20)
            # room for about two intervals, applied live
            limit = sum(st.st_size for st in files_of(out).values()) * 2 // 3
            a.config.write_text(config + f"max_dir_bytes = {limit}\n")
            a.signal(signal.SIGHUP)
            wait_for("the reload", lambda: "reloaded" in a.stderr(), 10)
            names = set()

            def removed():
                files = files_of(out)
                names.update(files)
                return (len(files) < len(names)
                        and sum(st.st_size for st in files.values()) <= limit)

            wait_for("the oldest files to go", removed, 30)
            assert a.stop() == 0, a.stderr()
        files = files_of(out)
        names |= set(files)
    assert files and sum(st.st_size for st in files.values()) <= limit
    assert len(files) < len(names), "nothing was removed"
    # the oldest went first: no interval left is older than one removed
    def stamp(name):
        return NAME.match(name).group(1)
    assert max(map(stamp, names - set(files))) <= min(map(stamp, files)), (files, names)
    assert not list(out.glob(".*")), "temporary files left"


def test_agent_config_errors(tmp_path):
    conf = tmp_path / "agent.conf"
    for text, message in [
        ("interval = 10s\nintervall = 5s\n", f"{conf}:2: unknown key 'intervall'"),
        ("output_dir = /tmp\nmax_age = forever\n", f"{conf}:2: max_age: invalid duration"),
        ("output_dir = /tmp\n[agent]\nformats = pprof\n", f"{conf}:3: formats: sections"),
        ("interval = 10s\n", "nothing to do: set output_dir or otlp_endpoint"),
    ]:
        conf.write_text(text)
        proc = subprocess.run([str(LABELPROF), "agent", "--config", str(conf)],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, (text, proc.stderr)
        assert message in proc.stderr, (text, proc.stderr)
    proc = subprocess.run([str(LABELPROF), "agent", "--config", str(tmp_path / "missing")],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "missing: No such file or directory" in proc.stderr
    proc = subprocess.run([str(LABELPROF), "agent", "--output-dir", "/tmp", "--interval", "0"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "--interval: '0' is out of range" in proc.stderr


def test_agent_sd_notify(tmp_path):
    """The messages a Type=notify unit with WatchdogSec= gets."""
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock, demo() as wl:
        sock.bind(path)
        sock.settimeout(20)
        config = f"interval = 1s\noutput_dir = {tmp_path}/out\n"
        env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"}
        with agent(tmp_path, config, "-p", wl.pid, env=env) as a:

            def expect(prefix):
                """The fields of the next message with a field starting with prefix."""
                while True:
                    fields = sock.recv(4096).decode().split("\n")
                    if any(f.startswith(prefix) for f in fields):
                        return fields

            ready = expect("READY=1")
            assert any(f.startswith("STATUS=sampling") for f in ready), ready
            expect("WATCHDOG=1")
            expect("STATUS=1 interval,")
            a.signal(signal.SIGHUP)
            assert any(f.startswith("MONOTONIC_USEC=") for f in expect("RELOADING=1"))
            expect("READY=1")
            a.signal(signal.SIGTERM)
            expect("STOPPING=1")
            assert a.proc.wait(timeout=30) == 0, a.stderr()


def cgroup2_root():
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return pathlib.Path(mnt)
    pytest.fail("no cgroup v2 hierarchy mounted")


def test_agent_container_attributes(tmp_path):
    root = cgroup2_root()
    cid = os.urandom(32).hex()
    pod = str(uuid.uuid4())
    base = root / f"labelprof-e2e-{os.getpid()}"
    leaf = (base / f"kubepods-burstable-pod{pod.replace('-', '_')}.slice"
            / f"cri-containerd-{cid}.scope")
    with demo() as wl, receiver() as rcv:
        leaf.mkdir(parents=True)
        try:
            (leaf / "cgroup.procs").write_text(str(wl.pid))
            config = f"freq = 99\ninterval = 1s\notlp_endpoint = {rcv.url}\n"
            with agent(tmp_path, config, "-p", wl.pid) as a:
                wait_for("an interval", lambda: len(rcv.accepted()) >= 1, 20)
                assert a.stop() == 0, a.stderr()
        finally:
            (root / "cgroup.procs").write_text(str(wl.pid))
            for d in (leaf, leaf.parent, base):
                d.rmdir()
    text = rcv.accepted()[0].text
    assert re.search(r'key: "container.id"\s+value \{\s+string_value: "%s"' % cid, text), text[:3000]
    assert re.search(r'key: "k8s.pod.uid"\s+value \{\s+string_value: "%s"' % pod, text), text[:3000]


def pprof_processes(tmp_path, path):
    """{(pid, process name)} of a pprof profile's samples, read back by convert."""
    out = tmp_path / (path.name + ".json")
    subprocess.run([str(LABELPROF), "convert", str(path), "--format", "json", "-o", str(out)],
                   check=True, capture_output=True, timeout=60)
    doc = json.loads(out.read_text())
    names = {p["pid"]: p.get("name") for p in doc.get("processes") or []}
    return {(s.get("pid"), names.get(s.get("pid"))) for s in doc["samples"]}


@pytest.mark.parametrize("labels", [None, ""])
def test_agent_pprof_labels_default_pid_comm(tmp_path, labels):
    """As record: the agent's pprof profiles label samples with pid and comm by
    default, so that the process survives; --pprof-labels "" leaves them out."""
    out = tmp_path / "profiles"
    config = f"freq = 99\ninterval = 1s\noutput_dir = {out}\nformats = pprof\n"
    flags = [] if labels is None else ["--pprof-labels", labels]
    with demo() as wl:
        with agent(tmp_path, config, "-p", wl.pid, *flags) as a:
            wait_for("two profiles", lambda: len(files_of(out)) >= 2, 30)
            assert a.stop() == 0, a.stderr()
    got = set()
    for name in files_of(out):
        got |= pprof_processes(tmp_path, out / name)
    want = {(wl.pid, "demo")} if labels is None else {(0, None)}
    assert got == want, f"--pprof-labels {labels!r}: {got}"

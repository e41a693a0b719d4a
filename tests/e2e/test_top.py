"""labelprof top on the demo workload: on a terminal (tmux) it shows each
tenant's CPU share, quits on q, Ctrl-C and SIGTERM with the terminal as it
was; piped, it prints one plain snapshot per refresh.

The demo (tests/workloads/demo.c) picks a tenant per request by traffic share
(50/30/20) and an endpoint by the tenant's own shares; each (tenant, endpoint)
costs a known CPU time. A tenant's CPU share is its traffic times its mean
request cost: acme 30 %, globex 43 %, initech 27 %, not 50/30/20.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import time

import pytest

from conftest import LABELPROF, check_exit, measure, started, workload

FREQ = 999
# Percentage points a share may differ from the demo's (sampling noise of
# a few hundred samples per refresh on a busy machine, and unlabelled gaps).
TOLERANCE = 10

# tests/workloads/demo.c: tenant_share, endpoint_share, and handle_*'s CPU time in µs.
TENANT_TRAFFIC = {"acme": 50, "globex": 30, "initech": 20}
ENDPOINT_TRAFFIC = {
    "acme": {"/checkout": 40, "/search": 50, "/login": 10},
    "globex": {"/checkout": 30, "/search": 60, "/login": 10},
    "initech": {"/checkout": 20, "/search": 30, "/login": 50},
}


def request_us(tenant, endpoint):
    if endpoint == "/checkout":
        return 150 + (1200 if tenant == "globex" else 400)
    if endpoint == "/search":
        return (1800 if tenant == "globex" else 600) + 100
    return 2500 if tenant == "initech" else 1200


def _expected():
    cpu = {(t, e): TENANT_TRAFFIC[t] * share * request_us(t, e)
           for t, shares in ENDPOINT_TRAFFIC.items() for e, share in shares.items()}
    total = sum(cpu.values())
    return {k: 100 * v / total for k, v in cpu.items()}


COMBINATION_SHARES = _expected()
TENANT_SHARES = {t: sum(v for (tt, _), v in COMBINATION_SHARES.items() if tt == t)
                 for t in TENANT_TRAFFIC}

# The function each endpoint spends most of its CPU time in (demo.c's handle_*).
BURN_FUNCTIONS = {"/checkout": "compute_tax", "/search": "search_index", "/login": "hash_password"}

ROW = re.compile(r"^ *(\d+\.\d)% +(\d+)  (.*)$")
ELAPSED = re.compile(r"(\d+):(\d\d):(\d\d) elapsed")
REFRESH = re.compile(r"refresh (\d+\.\d) ms")


def parse_rows(text, nkeys):
    """The table rows of a snapshot or screen: (values, share, samples, functions)."""
    rows = []
    for line in text.splitlines():
        m = ROW.match(line)
        if not m or line.rstrip().endswith("more rows)"):
            continue
        cells = re.split(r"  +", m.group(3).strip(), maxsplit=nkeys)
        cells += [""] * (nkeys + 1 - len(cells))
        rows.append((tuple(cells[:nkeys]), float(m.group(1)), int(m.group(2)), cells[nkeys]))
    return rows


def shares_of(rows, keys):
    """Samples per value (tuple) among rows whose values are all in keys, in percent."""
    counts = {k: 0 for k in keys}
    for values, _, samples, _ in rows:
        key = values[0] if len(values) == 1 else values
        if key in counts:
            counts[key] += samples
    total = sum(counts.values())
    assert total > 0, f"no row of {sorted(keys)} in {rows}"
    return {k: 100 * c / total for k, c in counts.items()}, total


def check_shares(got, want, what):
    for k, share in want.items():
        assert abs(got[k] - share) <= TOLERANCE, (
            f"{what}: {k} has {got[k]:.1f} % of the CPU, the demo spends {share:.1f} %: {got}")


@pytest.fixture
def demo():
    # the demo serves until its duration ends or SIGTERM (not when stdin closes)
    with started([workload("demo"), "--threads", 2, "--duration", 300, "--quiet"]) as wl:
        yield wl
        wl.proc.terminate()
    check_exit(wl)


def top_cmd(pid, *args):
    assert LABELPROF.is_file(), f"{LABELPROF} is missing"
    return [str(LABELPROF), "top", "-p", str(pid), "-F", str(FREQ)] + [str(a) for a in args]


def test_top_piped(request, demo):
    proc = subprocess.run(top_cmd(demo.pid, "--by", "tenant", "-n", 3), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "\x1b" not in out, f"terminal sequences in piped output: {out!r}"
    snapshots = out.split("\n\n")
    assert snapshots[-1] == "", f"output does not end with a blank line: {out!r}"
    snapshots = snapshots[:-1]
    assert len(snapshots) == 3, f"-n 3 printed {len(snapshots)} snapshots: {out}"
    rows = []
    for snap in snapshots:
        lines = snap.splitlines()
        assert lines[0].startswith("labelprof top") and "by tenant" in lines[0], snap
        assert lines[3].split() == ["SHARE", "SAMPLES", "tenant", "HOTTEST", "FUNCTIONS",
                                    "(SELF)"], snap
        snap_rows = parse_rows(snap, 1)
        assert {v[0] for v, _, _, _ in snap_rows} <= set(TENANT_TRAFFIC) | {"(not set)"}, snap
        assert set(TENANT_TRAFFIC) <= {v[0] for v, _, _, _ in snap_rows}, snap
        # rows sorted by share; shares of all rows add up
        assert [r[2] for r in snap_rows] == sorted((r[2] for r in snap_rows), reverse=True)
        assert abs(sum(r[1] for r in snap_rows) - 100) < 1, snap
        rows += snap_rows
    got, total = shares_of(rows, TENANT_SHARES)
    measure(request, "tenant shares over 3 refreshes: " +
            ", ".join(f"{t} {got[t]:.1f} % (demo {TENANT_SHARES[t]:.1f} %)" for t in got) +
            f", {total} samples")
    check_shares(got, TENANT_SHARES, "piped snapshots")
    # a tenant's time goes to the request functions (wl_spin inlined in them is their own)
    for (tenant,), _, _, fns in rows:
        if tenant != "(not set)":
            assert fns.split()[0] in BURN_FUNCTIONS.values(), (tenant, fns)
    costs = [float(m) for m in REFRESH.findall(out)]
    measure(request, f"refresh cost at {FREQ} Hz (take, symbolize, group): first "
            f"{costs[0]:.1f} ms, then {', '.join(f'{c:.1f}' for c in costs[1:])} ms")


def test_top_combinations(request, demo):
    proc = subprocess.run(top_cmd(demo.pid, "--by", "tenant,endpoint", "-n", 2, "--interval", 2),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "by tenant,endpoint" in out
    rows = parse_rows(out, 2)
    for (tenant, endpoint), _, _, _ in rows:
        assert tenant in TENANT_TRAFFIC or tenant == "(not set)", rows
        assert endpoint in ENDPOINT_TRAFFIC["acme"] or endpoint == "(not set)", rows
    got, total = shares_of(rows, COMBINATION_SHARES)
    seen = {v for v, _, _, _ in rows}
    missing = set(COMBINATION_SHARES) - seen
    assert not missing, f"combinations missing: {missing}"
    measure(request, f"{len(seen)} rows of tenant,endpoint over {total} labelled samples")
    check_shares(got, COMBINATION_SHARES, "tenant,endpoint")
    for (tenant, endpoint), _, samples, fns in rows:
        if endpoint in BURN_FUNCTIONS and samples >= 20:
            assert fns.split()[0] == BURN_FUNCTIONS[endpoint], (tenant, endpoint, fns)


class Tmux:
    """A tmux server of its own, with one window (200x50 unless told) running a shell
    command."""

    def __init__(self, command, width=200, height=50):
        assert shutil.which("tmux"), "tmux is not installed: make deps"
        self.socket = f"labelprof-test-{os.getpid()}-{time.monotonic_ns()}"
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        self.run("new-session", "-d", "-x", str(width), "-y", str(height), command, env=env)

    def run(self, *args, env=None):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              check=True, timeout=30, env=env).stdout

    def screen(self, *flags):
        return self.run("capture-pane", "-p", *flags)

    def var(self, name):
        return self.run("display-message", "-p", f"#{{{name}}}").strip()

    def wait_for(self, predicate, what, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.screen()
            if predicate(text):
                return text
            time.sleep(0.3)
        pytest.fail(f"tmux never showed {what}; screen:\n{self.screen()}")

    def kill(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=30)


def elapsed_s(text):
    m = ELAPSED.search(text)
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3)) if m else -1


def shows_tenants(text):
    # from the third refresh on: the first covers the program's own start
    return (elapsed_s(text) >= 3
            and set(TENANT_TRAFFIC) <= {v[0] for v, _, _, _ in parse_rows(text, 1)})


def screens(tmux, count):
    """count consecutive refreshed screens that show the three tenants."""
    seen = {}
    while len(seen) < count:
        text = tmux.wait_for(lambda s: shows_tenants(s) and elapsed_s(s) not in seen,
                             "the three tenants")
        seen[elapsed_s(text)] = text
    return list(seen.values())


def child_of(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        children = f.read().split()
    assert len(children) == 1, f"pane shell {pid} has children {children}"
    return int(children[0])


@pytest.mark.parametrize("quit_with", ["q", "C-c", "SIGTERM"])
def test_top_terminal(request, tmp_path, demo, quit_with):
    before, after = tmp_path / "stty-before", tmp_path / "stty-after"
    top = shlex.join(top_cmd(demo.pid, "--by", "tenant"))
    # Ctrl-C interrupts the whole foreground group: the shell lives on to report
    script = (f"trap : INT; stty -g > {before}; {top}; echo \"labelprof exited $?\"; "
              f"stty -g > {after}; sleep 600")
    tmux = Tmux(shlex.join(["sh", "-c", script]))
    try:
        shown = screens(tmux, 3)
        assert tmux.var("alternate_on") == "1", "top should draw on the alternate screen"
        for screen in shown:
            lines = screen.splitlines()
            assert all(len(line) <= 200 for line in lines)
            assert "by tenant" in lines[0] and "HOTTEST FUNCTIONS" in screen, screen
        assert "\x1b[1m" in tmux.screen("-e"), "no bold header on a terminal"
        got, total = shares_of([r for s in shown for r in parse_rows(s, 1)], TENANT_SHARES)
        measure(request, "tenant shares on 3 screens: " +
                ", ".join(f"{t} {got[t]:.1f} %" for t in got) + f" ({total} samples)")
        check_shares(got, TENANT_SHARES, "screen")

        if quit_with == "SIGTERM":
            os.kill(child_of(int(tmux.var("pane_pid"))), signal.SIGTERM)
        else:
            tmux.run("send-keys", quit_with)
        screen = tmux.wait_for(lambda s: "labelprof exited" in s, "labelprof's exit", 30)
        assert "labelprof exited 0" in screen, screen
        assert tmux.var("alternate_on") == "0", "the alternate screen is still on"
        assert "HOTTEST FUNCTIONS" not in screen, screen
        tmux.wait_for(lambda s: after.exists(), "stty's output", 10)
        assert before.read_text() == after.read_text(), "terminal settings not restored"
    finally:
        tmux.kill()


def test_top_no_color(demo):
    """NO_COLOR: no colours or bold on a terminal (the screen still redraws)."""
    top = shlex.join(["env", "NO_COLOR=1"] + top_cmd(demo.pid, "--by", "tenant"))
    tmux = Tmux(top)
    try:
        tmux.wait_for(shows_tenants, "the three tenants")
        styled = tmux.screen("-e")
        assert "\x1b[1m" not in styled and "\x1b[7m" not in styled, styled
    finally:
        tmux.kill()


def test_top_80x24_hints_and_help(demo):
    """On a default 80x24 terminal the whole header shows (nothing cut), the last
    line names the keys, h shows the help and any key goes back."""
    top = shlex.join(top_cmd(demo.pid))
    tmux = Tmux(shlex.join(["sh", "-c", f"{top}; echo \"labelprof exited $?\"; sleep 600"]),
                width=80, height=24)
    try:
        screen = tmux.wait_for(lambda s: elapsed_s(s) >= 2 and "HOTTEST" in s, "a refresh")
        lines = screen.split("\n")
        assert len(lines) >= 24 and all(len(line) <= 80 for line in lines), screen
        # every header field, whole: the auto-chosen key's note, refresh, read faults
        assert re.search(r"^labelprof top  by (tenant|endpoint) \(most common key; --by chooses\)$",
                         lines[0]), screen
        assert REFRESH.search(lines[1]) and ELAPSED.search(lines[1]), screen
        assert re.search(r"read faults \d+$", lines[2]), screen
        assert lines[23].strip() == HINTS, screen

        tmux.run("send-keys", "h")
        helped = tmux.wait_for(lambda s: "labelprof top: help" in s, "the help")
        assert "HOTTEST" not in helped and "--by" in helped, helped
        assert helped.split("\n")[23].strip() == "any key: back  q quit", helped
        tmux.run("send-keys", "x")
        tmux.wait_for(lambda s: "HOTTEST" in s and "labelprof top: help" not in s, "the table")
        tmux.run("send-keys", "q")
        screen = tmux.wait_for(lambda s: "labelprof exited" in s, "labelprof's exit", 30)
        assert "labelprof exited 0" in screen, screen
    finally:
        tmux.kill()


HINTS = "q quit  h help  space pause  s sort  b by  p pid"


def test_top_keys(demo):
    """The keys top/htop users expect while it runs: s sorts by value, b groups by
    other keys, p shows one process, space pauses, each said in the header."""
    top = shlex.join(top_cmd(demo.pid, "--by", "tenant"))
    tmux = Tmux(shlex.join(["sh", "-c", f"{top}; echo \"labelprof exited $?\"; sleep 600"]))

    def header(s):
        return s.split("\n")[0]

    def values(s, nkeys=1):
        return [v for v, _, _, _ in parse_rows(s, nkeys)]

    try:
        tmux.wait_for(shows_tenants, "the three tenants")
        assert tmux.screen().split("\n")[49].strip() == HINTS
        tmux.run("send-keys", "s")
        screen = tmux.wait_for(lambda s: "sorted by value" in header(s) and shows_tenants(s),
                               "rows sorted by value")
        tenants = [v[0] for v in values(screen)]
        assert tenants == sorted(t for t in tenants if t != "(not set)") + \
            (["(not set)"] if "(not set)" in tenants else []), screen

        tmux.run("send-keys", "b")
        tmux.wait_for(lambda s: "group by KEY" in s, "the prompt for keys")
        tmux.run("send-keys", "-l", "endpoint,tenant")
        tmux.run("send-keys", "Enter")
        screen = tmux.wait_for(lambda s: "by endpoint,tenant" in header(s) and
                               ("/search", "acme") in values(s, 2), "rows by endpoint,tenant")
        assert "most common key" not in header(screen)
        # a refused key leaves the rows as they were and says why
        tmux.run("send-keys", "b")
        tmux.run("send-keys", "-l", "trace_id")
        tmux.run("send-keys", "Enter")
        screen = tmux.wait_for(lambda s: "'trace_id' is a trace or span id" in s, "the refusal")
        assert "by endpoint,tenant" in header(screen), screen

        tmux.run("send-keys", "p")
        tmux.run("send-keys", "-l", "1")
        tmux.run("send-keys", "Enter")
        screen = tmux.wait_for(lambda s: "pid 1" in header(s) and
                               re.search(r"^samples 0 ", s, re.M), "nothing of pid 1")
        tmux.run("send-keys", "p")
        tmux.run("send-keys", "-l", str(demo.pid))
        tmux.run("send-keys", "Enter")
        tmux.wait_for(lambda s: f"pid {demo.pid}" in header(s) and
                      ("/search", "acme") in values(s, 2), "the demo's rows")
        tmux.run("send-keys", "p")
        tmux.run("send-keys", "Enter")
        tmux.wait_for(lambda s: "pid" not in header(s), "every process again")

        tmux.run("send-keys", "Space")
        screen = tmux.wait_for(lambda s: "PAUSED" in s, "the pause")
        time.sleep(2.5)
        assert elapsed_s(tmux.screen()) == elapsed_s(screen), "the table changed while paused"
        tmux.run("send-keys", "Space")
        tmux.wait_for(lambda s: "PAUSED" not in s and elapsed_s(s) > elapsed_s(screen),
                      "a refresh after the pause")

        tmux.run("send-keys", "?")
        helped = tmux.wait_for(lambda s: "labelprof top: help" in s, "the help")
        assert "space  pause" in helped and "p      one process" in helped, helped
        tmux.run("send-keys", "q")
        screen = tmux.wait_for(lambda s: "labelprof exited" in s, "labelprof's exit", 30)
        assert "labelprof exited 0" in screen, screen
    finally:
        tmux.kill()


def test_top_folds_request_ids(request, demo):
    """A fresh request_id per request: more values than --max-label-values in a
    refresh fold into one row "*" and a line says so; the tenants' shares stay
    right within it. --max-label-values 0 shows every id."""
    proc = subprocess.run(top_cmd(demo.pid, "--by", "request_id,tenant", "-n", 2,
                                  "--max-label-values", 20),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    snapshots = out.split("\n\n")[:-1]
    assert len(snapshots) == 2, out
    rows = []
    for snap in snapshots:
        lines = snap.splitlines()
        m = re.fullmatch(r"request_id has (\d+) values, shown as request_id=\* "
                         r"\(--max-label-values 20\)", lines[3])
        assert m and int(m.group(1)) > 20, snap
        snap_rows = parse_rows(snap, 2)
        assert {v[0] for v, _, _, _ in snap_rows} <= {"*", "(not set)"}, snap
        rows += snap_rows
    got, total = shares_of([((t,), s, n, f) for (r, t), s, n, f in rows if r == "*"],
                           TENANT_SHARES)
    measure(request, "tenant shares under request_id=*: " +
            ", ".join(f"{t} {got[t]:.1f} %" for t in got) + f" ({total} samples)")
    check_shares(got, TENANT_SHARES, "request_id=*")

    proc = subprocess.run(top_cmd(demo.pid, "--by", "request_id", "-n", 1,
                                  "--max-label-values", 0),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    ids = {v[0] for v, _, _, _ in parse_rows(out, 1)} - {"(not set)"}
    assert len(ids) > 20 and all(i.startswith("req-") for i in ids), out
    assert "shown as request_id=*" not in out, out


def test_top_folded_on_80x24(demo):
    """On a terminal the line about the folded key takes the header's blank line:
    the table keeps its rows and the hints stay on the last line."""
    top = shlex.join(top_cmd(demo.pid, "--by", "request_id"))
    tmux = Tmux(shlex.join(["sh", "-c", f"{top}; sleep 600"]), width=80, height=24)
    try:
        screen = tmux.wait_for(lambda s: elapsed_s(s) >= 2 and "HOTTEST" in s, "a refresh")
        lines = screen.split("\n")
        assert all(len(line) <= 80 for line in lines), screen
        assert re.fullmatch(r"request_id has \d+ values, shown as request_id=\* "
                            r"\(--max-label-values 100\)", lines[3].rstrip()), screen
        assert lines[4].split()[:3] == ["SHARE", "SAMPLES", "request_id"], screen
        assert {v[0] for v, _, _, _ in parse_rows(screen, 1)} <= {"*", "(not set)"}, screen
        assert lines[23].strip() == HINTS, screen
    finally:
        tmux.kill()


@pytest.mark.parametrize("key", ["trace_id", "span-id", "root-span-id"])
def test_top_by_trace_key_is_a_usage_error(key):
    proc = subprocess.run([str(LABELPROF), "top", "--by", f"tenant,{key}"],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert f"--by: '{key}' is a trace or span id" in err, err
    assert proc.stdout == b"", proc.stdout


def test_top_keeps_trace_ids_out(tmp_path):
    """A process whose samples carry trace and span ids (OTel thread context):
    the default key is never one of them, and --by a key no sample sets does not
    suggest them."""
    from test_otel import otel_argv  # here: test_otel imports this module

    with started(otel_argv("lib", tmp_path / "otel.json")) as wl:
        auto = subprocess.run(top_cmd(wl.pid, "-n", 2), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
        missing = subprocess.run(top_cmd(wl.pid, "--by", "nosuchkey", "-n", 1),
                                 stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    check_exit(wl)
    assert auto.returncode == 0 and missing.returncode == 0, (auto.stderr, missing.stderr)
    out = auto.stdout.decode()
    keys = set(re.findall(r"^labelprof top  by (\S+) \(most common key", out, re.M))
    assert keys and not keys & {"trace_id", "span_id"}, out
    out = missing.stdout.decode()
    seen = re.search(r"^no sample sets nosuchkey; keys seen: (.*)$", out, re.M)
    assert seen, out
    keys = set(seen.group(1).split(", "))
    assert {"tenant", "service.name"} <= keys and not keys & {"trace_id", "span_id"}, out

"""What labelprof says when something is wrong, and about itself: a flag
error exits 2 and names the flag; a file error names the file the user gave;
problems are found before the BPF program loads or sampling is announced;
--version, -v and -vv."""

import json
import os
import pty
import re
import subprocess
import time
import urllib.request

import pytest

from conftest import LABELPROF, OUTPUT
from test_agent import free_port, wait_for
from test_top import demo  # noqa: F401 (a fixture)

# (command line, the flag the message must name)
FLAG_ERRORS = [
    (["record", "--max-labels", "100", "--", "true"], "--max-labels"),
    (["record", "-d", "soon", "--", "true"], "--duration"),
    (["record", "-p", "0"], "--pid"),
    (["record", "-p", "12x"], "--pid"),
    (["record", "--format", "svg", "--", "true"], "--format"),
    (["record", "--pprof-labels", "uid", "--", "true"], "--pprof-labels"),
    (["record", "-F", "fast", "--", "true"], "--freq"),
    (["top", "--max-labels", "100"], "--max-labels"),
    (["top", "--interval", "0"], "--interval"),
    (["top", "-n", "none"], "--iterations"),
    (["top", "--by", "tenant,tenant"], "--by"),
    (["top", "--by", ","], "--by"),
    (["top", "-p", "-5"], "--pid"),
    (["agent", "--output-dir", "/tmp", "--max-labels", "100"], "--max-labels"),
    (["agent", "--output-dir", "/tmp", "--interval", "0"], "--interval"),
    (["convert", "--input-format", "xml", "in.json"], "--input-format"),
    (["convert", "--format", "svg", "in.json"], "--format"),
]


def run(*args, timeout=60):
    return subprocess.run([str(LABELPROF), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args,flag", FLAG_ERRORS, ids=[" ".join(a) for a, _ in FLAG_ERRORS])
def test_flag_error_names_the_flag(args, flag):
    proc = run(*args)
    assert proc.returncode == 2, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"labelprof {args[0]}: {flag}"), proc.stderr
    assert "sampling" not in proc.stderr, proc.stderr


def test_output_error_is_the_targets():
    """/proc/version cannot be written; a temporary file beside it cannot be
    made either, but that is not what the user asked about."""
    proc = run("record", "-o", "/proc/version", "-d", 1, "--", "true")
    assert proc.returncode == 1, proc.stderr
    assert "cannot write /proc/version: Permission denied" in proc.stderr, proc.stderr
    assert "No such file" not in proc.stderr, proc.stderr


def test_output_error_before_bpf(tmp_path):
    """An unwritable destination fails before the BPF program is loaded:
    -vv shows no libbpf message."""
    out = tmp_path / "missing" / "x.json"
    proc = run("record", "-vv", "-o", out, "--", "true")
    assert proc.returncode == 1, proc.stderr
    assert f"cannot write {out}: No such file or directory" in proc.stderr, proc.stderr
    assert "libbpf:" not in proc.stderr, proc.stderr


def test_command_that_cannot_run(tmp_path):
    out = tmp_path / "x.json"
    proc = run("record", "-o", out, "--", "/nonexistent")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip() == "labelprof: cannot run /nonexistent: No such file or directory"
    assert not out.exists()


def test_agent_without_output_names_flags():
    proc = run("agent")
    assert proc.returncode == 2, proc.stderr
    assert "--output-dir" in proc.stderr and "--otlp-endpoint" in proc.stderr, proc.stderr


THREAD_ID_ARGS = {
    "record": ["-d", 1, "-o", "/dev/null", "-p"],
    "top": ["-n", 1, "-p"],
    "labels": [],
}


@pytest.mark.parametrize("command", THREAD_ID_ARGS)
def test_thread_id_rejected(demo, command):  # noqa: F811
    """A thread id is refused in the words labels uses, not sampled as nothing."""
    tid = max(int(t) for t in os.listdir(f"/proc/{demo.pid}/task"))
    assert tid != demo.pid, "the demo runs threads"
    proc = run(command, *THREAD_ID_ARGS[command], tid)
    assert proc.returncode == 1, proc.stderr
    assert f"{tid} is a thread of process {demo.pid}: give the process id" in proc.stderr


VERSION = re.compile(r"^labelprof (\S+)\n$")


def test_version():
    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    m = VERSION.match(proc.stdout)
    assert m, proc.stdout
    version = m.group(1)
    assert version not in ("dev", "unknown"), version
    for args in (["-V"], ["record", "--version"], ["top", "-V"]):
        again = run(*args)
        assert again.returncode == 0 and again.stdout == proc.stdout, (args, again)
    assert "--version" in run("--help").stdout


def test_version_in_otlp_scope_and_metrics(tmp_path, demo):  # noqa: F811
    version = VERSION.match(run("--version").stdout).group(1)
    out = tmp_path / "p.otlp.json"
    proc = run("record", "-p", demo.pid, "-d", 1, "--format", "otlp-json", "-o", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    scopes = [sp["scope"] for rp in doc["resourceProfiles"] for sp in rp["scopeProfiles"]]
    assert scopes and all(s == {"name": "labelprof", "version": version} for s in scopes), scopes

    port = free_port()
    agent = subprocess.Popen([str(LABELPROF), "agent", "--output-dir", str(tmp_path / "out"),
                              "--metrics-listen", f"127.0.0.1:{port}", "-p", str(demo.pid)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    text = []

    def scraped():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                text.append(r.read().decode())
            return True
        except OSError:
            time.sleep(0.2)
            return agent.poll() is not None

    try:
        wait_for("the agent's metrics", scraped, 60)
    finally:
        agent.terminate()
        _, err = agent.communicate(timeout=60)
    assert text, f"the agent exited {agent.returncode}: {err}"
    assert "# TYPE labelprof_build_info gauge\n" in text[-1], text[-1]
    assert f'\nlabelprof_build_info{{version="{version}"}} 1\n' in text[-1], text[-1]


def test_verbose_levels(demo):  # noqa: F811
    """-v: labelprof's own diagnostics (what it found in the process); -vv:
    libbpf's messages too."""
    lines = {}
    for flag in ("-v", "-vv"):
        proc = run("record", flag, "-p", demo.pid, "-d", 1, "-o", "/dev/null")
        assert proc.returncode == 0, proc.stderr
        lines[flag] = proc.stderr.splitlines()
    own = [line for line in lines["-v"] if line.startswith(f"labelprof: pid {demo.pid}: ")]
    assert own, lines["-v"]
    assert not [line for line in lines["-v"] if line.startswith("libbpf:")], lines["-v"]
    libbpf = [line for line in lines["-vv"] if line.startswith("libbpf:")]
    assert len(libbpf) > 50, lines["-vv"]
    assert len(lines["-v"]) < 10 < len(lines["-vv"]), (len(lines["-v"]), len(lines["-vv"]))


def size_text(n):
    """How labelprof says a size: bytes, then KB, MB ... (1024), one decimal under 10."""
    if n < 1024:
        return f"{n} bytes"
    v, units = n / 1024, ["KB", "MB", "GB", "TB"]
    while v >= 1024 and len(units) > 1:
        v, units = v / 1024, units[1:]
    return f"{v:.1f} {units[0]}" if v < 10 else f"{v:.0f} {units[0]}"


def test_wrote_line_file_and_pipe(tmp_path, demo):  # noqa: F811
    """Like perf's "Captured and wrote 0.12 MB perf.data": the last line says
    where the profile went and how big it is."""
    out = tmp_path / "p.json"
    proc = run("record", "-p", demo.pid, "-d", 1, "-o", out)
    assert proc.returncode == 0, proc.stderr
    size = out.stat().st_size
    assert proc.stderr.splitlines()[-1] == f"labelprof: wrote {out} ({size_text(size)})"
    assert size > 1024, "the demo's profile is larger than a kilobyte"

    piped = subprocess.run([str(LABELPROF), "record", "-p", str(demo.pid), "-d", "1"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["format"] == "labelprof-json", "a pipe gets JSON"
    assert piped.stderr.decode().splitlines()[-1] == \
        f"labelprof: wrote <stdout> ({size_text(len(piped.stdout))})"

    conv = run("convert", "--format", "folded", "-o", tmp_path / "p.folded", out)
    assert conv.returncode == 0, conv.stderr
    folded = (tmp_path / "p.folded").stat().st_size
    assert conv.stderr.splitlines()[-1] == \
        f"labelprof: wrote {tmp_path / 'p.folded'} ({size_text(folded)})"


def on_terminal(*args, timeout=60):
    """labelprof ARGS with standard output on a pseudo-terminal: (status, output, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(LABELPROF), *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer closed it
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def test_terminal_gets_report(tmp_path, demo):  # noqa: F811
    """With no -o on a terminal: the report, not JSON; convert likewise."""
    status, out, err = on_terminal("record", "-p", demo.pid, "-d", 1)
    assert status == 0, err
    assert not out.lstrip().startswith("{"), out[:200]
    assert re.search(r"^tenant +share +samples +hottest functions", out, re.M), out
    assert err.splitlines()[-1].startswith("labelprof: wrote <stdout> ("), err

    saved = tmp_path / "p.json"
    assert run("record", "-p", demo.pid, "-d", 1, "-o", saved).returncode == 0
    status, out, err = on_terminal("convert", saved)
    assert status == 0, err
    assert re.search(r"^tenant +share +samples +hottest functions", out, re.M), out
    # --format still wins
    status, out, err = on_terminal("convert", "--format", "json", saved)
    assert status == 0 and json.loads(out)["format"] == "labelprof-json", err


@pytest.fixture
def unlabelled():
    """yes(1): busy writing, publishing no labels."""
    proc = subprocess.Popen(["yes"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_unlabelled_process_is_said_and_stacks_shown(unlabelled, demo):  # noqa: F811
    pid = unlabelled.pid
    warning = f"labelprof: pid {pid} publishes no labels (see labelprof inspect {pid})"
    proc = run("record", "-p", pid, "-d", 1, "--format", "report")
    assert proc.returncode == 0, proc.stderr
    assert warning in proc.stderr.splitlines(), proc.stderr
    out = proc.stdout
    assert "No sample carried labels" in out and "The hottest stacks, leaf first:" in out, out
    rows = re.findall(r"^ +(\d+\.\d)% +(\d+)  (.+)$", out, re.M)
    assert rows, out
    # yes spends its time writing: the write call is on its hottest stacks
    assert any("write" in stack for _, _, stack in rows[:3]), rows
    counts = [int(c) for _, c, _ in rows]
    assert counts == sorted(counts, reverse=True), rows

    top = run("top", "-p", pid, "-n", 1)
    assert top.returncode == 0, top.stderr
    assert warning in top.stderr.splitlines(), top.stderr
    labelled = run("record", "-p", demo.pid, "-d", 1, "-o", "/dev/null")
    assert "publishes no labels" not in labelled.stderr, labelled.stderr


def test_top_by_missing_key_lists_keys(demo):  # noqa: F811
    proc = run("top", "-p", demo.pid, "-n", 2, "--by", "nosuchkey")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stdout.splitlines() if line.startswith("no sample sets ")]
    assert len(notes) == 2, proc.stdout
    m = re.fullmatch(r"no sample sets nosuchkey; keys seen: (.*)", notes[-1])
    assert m, notes
    assert {"tenant", "endpoint"} <= set(m.group(1).split(", ")), notes
    # a key that is set gets no note
    proc = run("top", "-p", demo.pid, "-n", 1, "--by", "tenant")
    assert "no sample sets" not in proc.stdout, proc.stdout


def test_inspect_points_at_linked_label_library():
    """The demo publishes its labels through libcustomlabels.so, which it links
    (DT_NEEDED, found through its DT_RUNPATH): inspect of the file says so."""
    demo_exe = OUTPUT / "workloads" / "demo"
    lib = (OUTPUT / "lib" / "libcustomlabels.so").resolve()
    proc = run("inspect", demo_exe)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("labels: none"), proc.stdout
    assert lines[2] == f"linked label library: libcustomlabels.so ({lib}): custom_labels_v1", \
        proc.stdout
    # a file that links no label library, and one with labels of its own, say nothing of it
    for path in ("/bin/true", OUTPUT / "workloads" / "groundtruth-v1-exe"):
        proc = run("inspect", path)
        assert proc.returncode == 0 and "linked label library" not in proc.stdout, proc.stdout

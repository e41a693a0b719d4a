"""What labelprof needs of the system: `labelprof inspect --system` checks every
kernel feature for real, and sampling works where tracefs and debugfs are not
mounted (minimal VMs, containers), since every BPF program attaches through BTF."""

import json
import os
import subprocess

from conftest import FREQ, LABELPROF, Recording, load_json, started
from test_attribution import check_groundtruth, groundtruth_argv
from test_robustness import NOBODY

# Run in a private mount namespace with tracefs and debugfs unmounted wherever they are.
WITHOUT_TRACEFS = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   "for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do "
                   "umount -l $m 2>/dev/null; done; "
                   "if grep -Eq ' - (tracefs|debugfs) ' /proc/self/mountinfo; then "
                   "echo 'tracefs or debugfs still mounted' >&2; exit 99; fi; "
                   "exec \"$@\"", "sh"]


def mounted_types():
    with open("/proc/self/mountinfo") as f:
        return {line.split(" - ")[1].split()[0] for line in f}


def inspect_system(*prefix, user=None):
    cmd = [*prefix, str(LABELPROF), "inspect", "--system", "--json"]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 99, proc.stderr
    doc = json.loads(proc.stdout)
    return proc.returncode, doc, {f["name"]: f for f in doc["features"]}


def test_inspect_system_ready():
    rc, doc, features = inspect_system()
    assert rc == 0 and doc["ready"] is True, doc
    assert doc["kernel"] == os.uname().release and doc["machine"] == os.uname().machine
    for f in doc["features"]:
        if f["need"] == "required":
            assert f["state"] == "yes", f
    # this kernel has task iterators and the BPF memory allocator (6.1): nothing optional
    # is missing
    assert features["task_iterator"]["state"] == "yes", features["task_iterator"]
    assert features["runtime_hash_maps"]["state"] == "yes", features["runtime_hash_maps"]
    # reported as seen, and not needed either way
    types = mounted_types()
    for fs in ("tracefs", "debugfs"):
        assert features[fs]["need"] == "unused"
        assert (features[fs]["state"] == "yes") == (fs in types), (features[fs], types)


def test_inspect_system_unprivileged():
    """Without privileges: exit 1, the privileges line says what is missing, and
    what needs them is unchecked rather than guessed."""
    rc, doc, features = inspect_system(user=NOBODY)
    assert rc == 1 and doc["ready"] is False
    assert features["privileges"]["state"] == "no"
    assert "CAP_BPF is missing" in features["privileges"]["detail"]
    assert features["btf"]["state"] == "yes"
    for name in ("ringbuf", "bpf_loop", "runtime_hash_maps", "cpu_clock", "sampler",
                 "task_iterator"):
        assert features[name]["state"] == "unchecked", features[name]


def test_sampling_without_tracefs_or_debugfs(request, tmp_path):
    """In a mount namespace without tracefs and debugfs: inspect --system says
    so and is ready, and a recording of a workload whose label library is
    dlopen()ed attributes its samples as well as anywhere."""
    rc, doc, features = inspect_system(*WITHOUT_TRACEFS)
    assert rc == 0 and doc["ready"] is True, doc
    assert features["tracefs"]["state"] == "no" and features["debugfs"]["state"] == "no"

    report_path = tmp_path / "report.json"
    cmd = [*WITHOUT_TRACEFS, str(LABELPROF), "record", "-F", str(FREQ), "-d", "3", "-o", str(tmp_path / "p.json")]
    rec = Recording(cmd, tmp_path / "p.json")
    with started([*groundtruth_argv("v1-dlopen", report_path), "--wait-stdin"]) as wl:
        proc = subprocess.run([*cmd, "-p", str(wl.pid)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)
    rec.finish(proc.returncode, proc.stderr)
    assert rec.returncode == 0, rec.describe()
    check_groundtruth(request, rec, load_json(report_path))

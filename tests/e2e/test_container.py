"""A process in a container, profiled from the host. The container
(tests/workloads/container.c) has its own mount and PID namespaces and a
private tmpfs root holding the workload, its libcustomlabels.so and the glibc
they need. On the host, the paths the workload sees hold other files: an
unlabelled program and the v0 library, so reading the host's files instead of
the container's gives wrong labels and names, not merely none. labelprof must
read the container's files through the process's root and report the pid
the host knows. Both ways into a root are covered: pivot_root, as runc does,
and chroot(2) inside the new mount namespace."""

import contextlib
import os
import re
import shutil
import subprocess

import pytest

from conftest import (OUTPUT, REPO, as_bytes, check_exit, load_json, record, started,
                      which_function, workload)
from test_attribution import check_groundtruth
from test_labels import DEFAULT_MAX_LABELS, expected_threads, json_of, labelprof

MODES = ["pivot_root", "chroot"]
LIB = OUTPUT / "lib"
DURATION = 3
GROUNDTRUTH_SRC = REPO / "tests" / "workloads" / "groundtruth.c"


class Container:
    def __init__(self, wl, pid, exe, lib, out):
        self.wl = wl
        self.pid = pid  # as the host sees it
        self.exe = exe  # paths inside the container
        self.lib = lib
        self.out = out  # the host directory the container sees as /out

    def host_tids(self):
        """Thread ids inside the container -> on the host."""
        tids = {}
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            nstid = nspids(f"/proc/{self.pid}/task/{tid}/status")
            tids[nstid[-1]] = int(tid)
        return tids


def nspids(status_path):
    """The NSpid line of a /proc status file: the id in each PID namespace, outermost first."""
    with open(status_path, "rb") as f:
        m = re.search(rb"^NSpid:\s+(.*)$", f.read(), re.M)
    return [int(n) for n in m[1].split()]


def glibc_files(binary):
    """The libraries binary needs apart from libcustomlabels, at the paths ldd names."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    paths = re.findall(r"^\s*(?:\S+ => )?(/\S+) \(0x", out, re.M)
    return [p for p in paths if not os.path.basename(p).startswith("libcustomlabels")]


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


@contextlib.contextmanager
def contained(tmp_path, mode, name, *args):
    """Runs workload name (linked with libcustomlabels.so) in a container, entered by mode."""
    root, out, app = tmp_path / "root", tmp_path / "out", tmp_path / "app"
    root.mkdir()
    out.mkdir()
    exe, lib = app / "bin" / name, app / "lib" / "libcustomlabels.so"
    files = {exe: workload(name), lib: LIB / "libcustomlabels.so"}
    files.update((p, p) for p in glibc_files(workload(name)))
    for path, decoy in ((exe, workload("deepstack")), (lib, LIB / "libcustomlabels-v0.so")):
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(decoy, path)
    argv = [workload("container")] + (["-c"] if mode == "chroot" else [])
    for dest, src in files.items():
        argv += ["-f", f"{src}:{dest}"]
    argv += ["-b", f"{out}:/out", root, exe, *args]
    with started(argv) as wl:
        with open(f"/proc/{wl.pid}/task/{wl.pid}/children") as f:
            children = [int(p) for p in f.read().split()]
        assert len(children) == 1, f"the launcher has children {children}"
        pid = children[0]
        assert nspids(f"/proc/{pid}/status") == [pid, 1], "not pid 1 of a PID namespace"
        for ns in ("mnt", "pid"):
            assert os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"), (
                f"the workload shares the host's {ns} namespace")
        # The container's files are where the workload looks, the host holds others there
        # and does not see the container's root.
        assert not os.listdir(root), f"the container's root shows on the host: {root}"
        for path in (exe, lib):
            assert same_bytes(f"/proc/{pid}/root{path}", files[path]), path
            assert not same_bytes(path, files[path]), f"{path} is the same file on the host"
        yield Container(wl, pid, exe, lib, out)


def burn_lines():
    """Burn function -> the source lines of its body in groundtruth.c."""
    lines = GROUNDTRUTH_SRC.read_text().split("\n")
    found = {}
    for i, line in enumerate(lines, 1):
        m = re.match(r"BURN_SET\((\d+)\)$", line)
        if m:
            # the macro's code is all on the line of its use
            found[f"burn_set_{m[1]}"] = range(i, i + 1)
        elif "burn_unlabelled(uint64_t iters)" in line and line.startswith("static"):
            end = lines.index("}", i)
            found["burn_unlabelled"] = range(i, end + 1)
    return found


def check_frames(prof, ct, expected):
    """Every frame of a burn function: in the container's executable, with its
    file and line in groundtruth.c (expected: function -> lines)."""
    seen = set()
    for s in prof.of_pids(ct.pid):
        for frame in s["frames"]:
            fn = frame.get("function")
            if fn not in expected:
                continue
            seen.add(fn)
            assert frame["module"] == str(ct.exe), frame
            assert (frame["file"] or "").endswith("tests/workloads/groundtruth.c"), frame
            assert frame["line"] in expected[fn], f"{fn} is at lines {expected[fn]}: {frame}"
    assert seen == set(expected), f"burn functions never sampled: {set(expected) - seen}"


@pytest.mark.parametrize("mode", MODES)
def test_container_record(request, tmp_path, mode):
    """groundtruth in a container: labelprof record -p HOSTPID, then -a."""
    argv = ["--threads", "2", "--interval", "1000,5000", "--output", "/out/groundtruth.json",
            "--wait-stdin"]
    with contained(tmp_path, mode, "groundtruth-v1-lib", *argv) as ct:
        tids = ct.host_tids()
        by_pid = record(tmp_path, "-p", ct.pid, duration=DURATION)
        everything = record(tmp_path, "-a", duration=DURATION)
    check_exit(ct.wl)
    report = load_json(ct.out / "groundtruth.json")
    assert report["pid"] == 1, "the workload did not see itself as pid 1"
    workers = {tids[tid] for tid, *_ in report["intervals"]}
    burn_functions = burn_lines()
    assert set(burn_functions) == {s["function"] for s in report["sets"]} | {
        report["unlabelled"]["function"]}, f"burn functions found in the source: {burn_functions}"

    for rec in (by_pid, everything):
        prof = rec.profile
        # the workload reports its pid in its namespace; the profile has the host's
        check_groundtruth(request, rec, dict(report, pid=ct.pid))
        check_frames(prof, ct, burn_functions)
        samples = prof.of_pids(ct.pid)
        in_burn = {s["tid"] for s in samples if which_function(s, burn_functions)}
        assert in_burn == workers, f"burn samples of tids {in_burn}, workers {workers}"
        assert {s["tid"] for s in samples} <= set(tids.values())
        procs = [p for p in prof.doc["processes"] if p["pid"] == ct.pid]
        assert len(procs) == 1 and procs[0]["executable"] == str(ct.exe), prof.doc["processes"]
    assert {s["pid"] for s in by_pid.profile.samples} == {ct.pid}
    assert not by_pid.profile.of_pids(1), "samples with the pid inside the namespace"


@pytest.mark.parametrize("mode", MODES)
def test_container_labels(tmp_path, mode):
    """steady in a container: labelprof labels and inspect HOSTPID."""
    with contained(tmp_path, mode, "steady-v1-lib", "-o", "/out/steady.json") as ct:
        tids = ct.host_tids()
        labels = json_of(labelprof("labels", "--json", ct.pid))
        inspected = json_of(labelprof("inspect", "--json", ct.pid))
    check_exit(ct.wl)
    report = load_json(ct.out / "steady.json")
    file_facts = json_of(labelprof("inspect", "--json", LIB / "libcustomlabels.so"))
    # what a file links is asked of a file alone: a process's object is the library itself
    assert file_facts.pop("linked_label_library") is None, file_facts

    assert (labels["pid"], labels["form"], labels["object"]) == (ct.pid, "custom_labels_v1",
                                                                 str(ct.lib)), labels
    expected = {tids[tid]: v for tid, v in expected_threads(report).items()}
    got = {t["tid"]: t for t in labels["threads"]}
    assert set(got) == set(expected), f"threads {sorted(got)} != {sorted(expected)}"
    for tid, (comm, want) in expected.items():
        t = got[tid]
        read = {as_bytes(k): as_bytes(v) for k, v in t["labels"].items()}
        assert as_bytes(t["comm"]) == comm
        if len(want) > DEFAULT_MAX_LABELS:
            assert t["status"] == "truncated" and read.items() <= want.items(), t
        else:
            assert (t["status"], read) == ("ok", want), f"tid {tid} ({comm!r}): {t}"

    assert (inspected["pid"], inspected["status"], inspected["object"]) == (
        ct.pid, "ok", str(ct.lib)), inspected
    assert inspected["recipe"]["form"] == "custom_labels_v1", inspected
    # the facts of the library in the container are those of the file it was copied from
    assert inspected["file"] == dict(file_facts, file=str(ct.lib)), inspected

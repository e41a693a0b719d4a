"""User stacks: labelprof (--unwind fp) walks x86-64 frame-pointer chains in BPF and must give
exactly what the kernel's walker (perf_callchain_user, what bpf_get_stack and
`perf record -g` use) gives: the interrupted user ip, then the return addresses
of the frame-record chain, at most LP_MAX_USTACK_WORDS entries (the kernel's
walker stops at kernel.perf_event_max_stack; chains are compared up to that);
samples taken in kernel mode start from the task's saved user registers.

The deepstack workload's threads sit in known leaves under a known number of
descend() frames. The tests check labelprof's stacks against that shape, below
and beyond the frame limit, and against perf's raw callchains of the same
threads recorded at the same time."""

import collections
import os
import re
import shutil
import subprocess

import pytest

from conftest import (count, flags_of, in_kernel, load_json, max_stack, max_user_stack, measure,
                      names, record, recording, show, started, user_frames, workload)

DURATION = 3
SHALLOW = 40
DEEP = 300  # at least: deep_depth()
# Padding per descend() frame; the large one spreads 40 frames over 10 MiB,
# farther from the stack pointer than labelprof reads a page at a time.
SMALL_FRAME = 64
LARGE_FRAME = 256 << 10
# A caller chain seen this often by one tool must be seen by the other.
CHAIN_SHARE_MIN = 0.01
# Kernel frames perf's kernel-mode samples may have for their user stack to be
# compared (perf_event_max_stack bounds kernel and user frames together).
KERNEL_FRAMES_MAX = 48

ENTRY = {"burn": "deep_burn_thread", "sys": "deep_sys_thread", "libc": "deep_libc_thread",
         "main": "main"}
LEAF = {"burn": "burn_leaf", "sys": "sys_leaf", "main": "burn_leaf"}
# Where the frame-record chain ends above each entry: glibc's thread start and
# program start clear the frame pointer.
TAIL = {"burn": ["start_thread"], "sys": ["start_thread"], "libc": ["start_thread"],
        "main": ["__libc_start_call_main"]}

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64",
                                reason="labelprof walks frame pointers in BPF on x86-64 only")


def deep_depth():
    """A depth well beyond the frame limits, whatever they are set to."""
    return max(DEEP, max_stack() + 100, max_user_stack() + 100)


def deepstack(report, depth, frame_bytes=SMALL_FRAME, threads=2, sys_threads=2,
              libc_threads=1, main=True, cut=False):
    argv = [workload("deepstack"), "--threads", threads, "--sys-threads", sys_threads,
            "--libc-threads", libc_threads, "--depth", depth, "--frame-bytes", frame_bytes,
            "--output", report]
    return argv + (["--main"] if main else []) + (["--cut-threads"] if cut else [])


def thread_kinds(report_path):
    """The workload's pid and each thread's kind ("cut-MODE" for cut threads)."""
    report = load_json(report_path)
    return report["pid"], {t["tid"]: t["kind"] + (f"-{t['mode']}" if "mode" in t else "")
                           for t in report["threads"]}


def check_flags(samples):
    bad = [s for s in samples if flags_of(s) & {"ustack_error", "dropped"}]
    assert not bad, (f"{count(bad)}/{count(samples)} samples lost their user stack: "
                     f"{[(s['tid'], sorted(flags_of(s))) for s in bad[:5]]}")


def in_libc(frame):
    return os.path.basename(frame.get("module") or "").startswith("libc.so")


def check_exact(samples, kinds, depth, binary):
    """Every sample's user stack is its thread's expected chain, frame for frame.
    Returns samples per kind, how many of them were taken in kernel mode, and
    how many were left out: those of the libc threads that interrupted neither
    glibc nor deepstack (ASan's runtime, whose code keeps no frame records:
    test_same_chains_as_perf compares them)."""
    per_kind = collections.Counter()
    kernel_mode = collections.Counter()
    left_out = 0
    wrong = []
    for s in samples:
        kind = kinds.get(s["tid"])
        if kind is None:
            continue  # the thread that waits for stdin
        frames = user_frames(s)
        got = names(frames)
        expected = ["descend"] * depth + [ENTRY[kind]] + TAIL[kind]
        if kind == "libc" and frames and not (in_libc(frames[0])
                                               or frames[0].get("module") == binary):
            left_out += s["count"]
            continue
        if kind == "libc" and got[:1] == ["read@plt"] and frames[0].get("module") == binary:
            # on its way to read(), in its PLT stub, which keeps no frame record
            # either: the chain goes on from libc_leaf's record, at libc_leaf's caller
            ok = got == ["read@plt"] + expected
        elif kind == "libc":
            # glibc's read() has no frame record of its own: from libc the chain
            # goes straight to the return address of the call it was reached by
            # (into libc_leaf's caller, or with ASan's interceptor into libc_leaf)
            n = len(frames) - len(expected)
            prefix = frames[:max(n, 0)]
            ok = (1 <= n <= 3 and got[n:] == expected
                  and names(prefix).count("libc_leaf") <= 1
                  and all(f.get("module") != binary or f.get("function") == "libc_leaf"
                          for f in prefix))
        else:
            ok = got == [LEAF[kind]] + expected
        per_kind[kind] += s["count"]
        kernel_mode[kind] += s["count"] if in_kernel(s) else 0
        if not ok:
            wrong.append((s, kind))
    assert not wrong, (
        f"{sum(s['count'] for s, _ in wrong)}/{count(samples)} samples without the expected "
        f"user stack ({depth} x descend); first ones:\n" +
        "\n".join(f"  tid {s['tid']} ({k}, {len(user_frames(s))} frames): "
                  f"{show(user_frames(s), 12)}" for s, k in wrong[:5]))
    return per_kind, kernel_mode, left_out


@pytest.mark.parametrize("frame_bytes", [SMALL_FRAME, LARGE_FRAME], ids=["small", "large"])
def test_exact_chain_below_limit(request, tmp_path, frame_bytes):
    """Below the limit: leaf, descend exactly DEPTH times, the thread's entry,
    glibc's start, in every sample, whether taken in user or kernel mode."""
    report = tmp_path / "deepstack.json"
    # the main thread's stack is limited by RLIMIT_STACK: it only takes small frames
    with started(deepstack(report, SHALLOW, frame_bytes, main=frame_bytes == SMALL_FRAME)):
        pid, kinds = thread_kinds(report)
        binary = os.readlink(f"/proc/{pid}/exe")
        rec = record(tmp_path, "--unwind", "fp", "-p", pid, duration=DURATION)
    samples = rec.profile.of_pids(pid)
    assert count(samples) > 0, f"no samples of deepstack: {rec.stderr}"
    check_flags(samples)
    per_kind, kernel_mode, left_out = check_exact(samples, kinds, SHALLOW, binary)
    measure(request, f"frames of {frame_bytes} B: {count(samples)} samples, exact chains per "
                     f"thread kind {dict(per_kind)}, in kernel mode {dict(kernel_mode)}, "
                     f"left out (libc threads outside glibc) {left_out}")
    for kind in set(kinds.values()):
        assert per_kind[kind] > 0, f"no samples of the {kind} threads: {dict(per_kind)}"
    # the point of the sys and libc threads: stacks from the saved user registers
    for kind in ("sys", "libc"):
        assert kernel_mode[kind] > 0.5 * per_kind[kind], (
            f"only {kernel_mode[kind]}/{per_kind[kind]} samples of the {kind} threads "
            f"were taken in kernel mode")


def test_chain_cut_at_max_stack(request, tmp_path):
    """Beyond the limit: exactly the user stack limit's frames, the leaf and
    then only descend frames, in user and in kernel mode alike (the user stack
    does not share its budget with the kernel stack)."""
    limit = max_user_stack()
    depth = deep_depth()
    report = tmp_path / "deepstack.json"
    with started(deepstack(report, depth, libc_threads=0)):
        pid, kinds = thread_kinds(report)
        rec = record(tmp_path, "--unwind", "fp", "-p", pid, duration=DURATION)
    samples = [s for s in rec.profile.of_pids(pid) if s["tid"] in kinds]
    assert count(samples) > 0, f"no samples of deepstack: {rec.stderr}"
    check_flags(samples)
    lengths = collections.Counter()
    wrong = []
    kernel_mode = 0
    for s in samples:
        frames = user_frames(s)
        lengths[len(frames)] += s["count"]
        kernel_mode += s["count"] if in_kernel(s) else 0
        if names(frames) != [LEAF[kinds[s["tid"]]]] + ["descend"] * (limit - 1):
            wrong.append(s)
    measure(request, f"depth {depth}, limit {limit}: {count(samples)} samples "
                     f"({kernel_mode} in kernel mode), user frames per sample {dict(lengths)}")
    assert not wrong, (
        f"{count(wrong)}/{count(samples)} samples are not {limit} leaf/descend frames "
        f"(frames per sample: {dict(lengths)}); first ones:\n" +
        "\n".join(f"  tid {s['tid']} ({kinds[s['tid']]}, {len(user_frames(s))} frames): "
                  f"{show(user_frames(s), 4)} ... {show(user_frames(s)[-3:])}"
                  for s in wrong[:5]))
    assert kernel_mode > 0, "no sample taken in kernel mode: the sys threads did not run"


def test_chain_stops_at_unreadable_record(request, tmp_path):
    """A frame record CUT records above the leaf points elsewhere (far from the
    stack or on it, see deepstack's cut modes): where the next record cannot
    be read, the stack ends with the last return address read; a readable
    fake record adds its return address; a record pointing to itself repeats
    its return address up to the limit."""
    limit = max_user_stack()
    report = tmp_path / "deepstack.json"
    with started(deepstack(report, SHALLOW, threads=0, sys_threads=0, libc_threads=0,
                           main=False, cut=True)):
        pid, kinds = thread_kinds(report)
        rec = record(tmp_path, "--unwind", "fp", "-p", pid, duration=DURATION)
    info = load_json(report)
    readable = ["cut_leaf"] + ["descend"] * (info["cut"] + 1)
    tails = {"fake": [info["fake_ret"]], "stack_straddle": [info["fake_ret"]],
             "loop": [info["loop_ret"]] * (limit - len(readable))}
    tails_text = (f"{info['fake_ret']:#x} for fake and stack_straddle, {info['loop_ret']:#x} "
                  f"x {limit - len(readable)} for loop")
    samples = [s for s in rec.profile.of_pids(pid) if s["tid"] in kinds]
    check_flags(samples)
    per_mode = collections.Counter()
    wrong = []
    for s in samples:
        mode = kinds[s["tid"]].removeprefix("cut-")
        frames = user_frames(s)
        tail = [int(f["address"], 16) for f in frames[len(readable):]]
        per_mode[mode] += s["count"]
        if names(frames[:len(readable)]) != readable or tail != tails.get(mode, []):
            wrong.append((s, mode))
    measure(request, f"{count(samples)} samples, per way of breaking the chain {dict(per_mode)}")
    assert not wrong, (
        f"{sum(s['count'] for s, _ in wrong)}/{count(samples)} samples do not end where the "
        f"chain breaks ({len(readable)} readable frames, then {tails_text}); first ones:\n" +
        "\n".join(f"  {mode} ({len(user_frames(s))} frames, from frame {len(readable) - 1}): "
                  f"{show(user_frames(s)[len(readable) - 1:], 4)}" for s, mode in wrong[:5]))
    modes = {k.removeprefix("cut-") for k in kinds.values()}
    assert all(per_mode[m] > 0 for m in modes), f"modes never sampled: {dict(per_mode)}"


# ---- labelprof against perf's callchains ----------------------------------------------

PERF_CONTEXT_KERNEL = 2**64 - 128
PERF_CONTEXT_USER = 2**64 - 512
PERF_CONTEXT_MAX = 2**64 - 4095
SAMPLE_RE = re.compile(r"PERF_RECORD_SAMPLE\([^)]*\): (\d+)/(\d+): 0x[0-9a-f]+")
CHAIN_RE = re.compile(r"^\.\.\. (?:FP )?chain: nr:(\d+)")
ENTRY_RE = re.compile(r"^\.\.\.\.\.\s+(\d+): ([0-9a-f]+)")


class Symbols:
    """Functions of the workload binary at their run-time addresses (nm and
    /proc/PID/maps): one symbolizer for both tools' addresses."""

    def __init__(self, pid, binary):
        self.bias = None
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and parts[5] == binary and int(parts[2], 16) == 0:
                    self.bias = int(parts[0].split("-")[0], 16)
                    break
        assert self.bias is not None, f"{binary} is not mapped in {pid}"
        out = subprocess.run(["nm", "--defined-only", "-S", binary], check=True,
                             capture_output=True, text=True).stdout
        self.funcs = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "tT":
                start = int(parts[0], 16) + self.bias
                self.funcs.append((start, start + int(parts[1], 16), parts[3]))

    def name(self, addr):
        for start, end, name in self.funcs:
            if start <= addr < end:
                return name
        return "(not deepstack's)"

    def describe(self, addr, ret=True):
        """name+offset of an address; a return address names its call."""
        look = addr - 1 if ret else addr
        for start, end, name in self.funcs:
            if start <= look < end:
                return f"{name}+{addr - start:#x}"
        return f"{addr:#x}"


def perf_callchains(data):
    """(tid, kernel frames, user addresses) of every sample in a perf.data file,
    from the raw callchains the kernel recorded (`perf script -D`)."""
    proc = subprocess.run(["perf", "script", "-D", "-i", str(data)], capture_output=True,
                          text=True, errors="replace")
    assert proc.returncode == 0, f"perf script -D failed: {proc.stderr[-2000:]}"
    samples = []
    tid, chain, want = None, None, 0
    for line in proc.stdout.splitlines():
        if want:
            m = ENTRY_RE.match(line)
            assert m, f"perf script -D: unexpected line in a callchain: {line!r}"
            chain.append(int(m.group(2), 16))
            want -= 1
            if not want:
                samples.append((tid, chain))
            continue
        m = SAMPLE_RE.search(line)
        if m:
            tid, chain = int(m.group(2)), None
            continue
        m = CHAIN_RE.match(line)
        if m and tid is not None and chain is None:
            chain, want = [], int(m.group(1))
            if not want:
                samples.append((tid, chain))
    out = []
    for tid, chain in samples:
        kernel, user, ctx = 0, [], None
        for addr in chain:
            if addr >= PERF_CONTEXT_MAX:
                ctx = addr
            elif ctx == PERF_CONTEXT_USER:
                user.append(addr)
            elif ctx == PERF_CONTEXT_KERNEL:
                kernel += 1
        out.append((tid, kernel, user))
    return out


def chain_key(syms, tid, kernel_mode, addrs, keep):
    """What both tools must agree on: the thread, whether the sample was taken
    in kernel mode, the leaf's function and the return addresses above it,
    the first keep frames of them. A user stack ends before its first 0 address
    (docs/json-format.md), so perf's chains are cut there too."""
    if 0 in addrs:
        addrs = addrs[:addrs.index(0)]
    addrs = addrs[:keep]
    if not addrs:
        return (tid, kernel_mode, None, ())
    return (tid, kernel_mode, syms.name(addrs[0]), tuple(addrs[1:]))


def describe_key(syms, key, n):
    tid, kernel_mode, leaf, callers = key
    shown = " <- ".join(syms.describe(a) for a in callers[:6]) or "(no return address)"
    more = f" <- ... ({len(callers)} return addresses)" if len(callers) > 6 else ""
    mode = "kernel" if kernel_mode else "user"
    return f"  {n} samples: tid {tid} in {mode} mode, leaf {leaf} <- {shown}{more}"


def compare(syms, name_a, chains_a, name_b, chains_b):
    """Failure lines for every chain with CHAIN_SHARE_MIN of chains_a's samples
    that chains_b never saw (where chains_b's share would be 5 samples or more:
    fewer could all miss by chance)."""
    total, total_b = sum(chains_a.values()), sum(chains_b.values())
    missing = [(k, n) for k, n in chains_a.most_common()
               if n >= CHAIN_SHARE_MIN * total and n * total_b >= 5 * total
               and k not in chains_b]
    if not missing:
        return []
    lines = [f"{sum(n for _, n in missing)}/{total} {name_a} samples in {len(missing)} chains "
             f"that {name_b} never recorded:"]
    for key, n in missing[:4]:
        lines.append(describe_key(syms, key, n))
        # the nearest chain of the other tool for the same thread and leaf
        near = [k for k in chains_b if k[:3] == key[:3]]
        if near:
            best = max(near, key=lambda k: sum(a == b for a, b in zip(k[3], key[3])))
            diff = next((i for i, (a, b) in enumerate(zip(best[3], key[3])) if a != b),
                        min(len(best[3]), len(key[3])))
            rest = " <- ".join(syms.describe(a) for a in best[3][diff:diff + 3]) or "(its end)"
            lines.append(f"    {name_b}'s nearest ({len(best[3])} return addresses) differs "
                         f"from return address {diff}: {rest}")
    return lines


@pytest.mark.parametrize("depth,frame_bytes", [(SHALLOW, SMALL_FRAME), (SHALLOW, LARGE_FRAME),
                                               (None, SMALL_FRAME)],
                         ids=["shallow", "shallow-large-frames", "deep"])
def test_same_chains_as_perf(request, tmp_path, depth, frame_bytes):
    """labelprof and `perf record -g` sample the same threads at once: every
    caller chain either sees in 1 % of its samples, the other sees too.
    Shallow runs add the cut threads (their loop reaches the limit too)."""
    assert shutil.which("perf"), "perf (Debian's linux-perf) is not installed: make deps"
    limit = max_stack()
    depth = depth or deep_depth()
    report = tmp_path / "deepstack.json"
    data = tmp_path / "perf.data"
    with started(deepstack(report, depth, frame_bytes, main=frame_bytes == SMALL_FRAME,
                           cut=depth < limit)):
        pid, kinds = thread_kinds(report)
        binary = os.readlink(f"/proc/{pid}/exe")
        syms = Symbols(pid, binary)
        with recording(tmp_path, "--unwind", "fp", "-p", pid) as rec:
            perf = subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "999", "-g",
                                   "-p", str(pid), "-o", str(data), "--", "sleep",
                                   str(DURATION)], capture_output=True, text=True, timeout=120)
    assert perf.returncode == 0, f"perf record failed: {perf.stderr[-2000:]}"
    samples = [s for s in rec.profile.of_pids(pid) if s["tid"] in kinds]
    check_flags(samples)

    # perf's kernel frames share its budget of perf_event_max_stack with the
    # user frames, bpf_get_stack's user stack does not: samples taken in kernel
    # mode are compared on their first limit - KERNEL_FRAMES_MAX user frames
    kernel_keep = limit - KERNEL_FRAMES_MAX
    ours, theirs = collections.Counter(), collections.Counter()
    skipped = 0
    for s in samples:
        addrs = [int(f["address"], 16) for f in user_frames(s)]
        kernel_mode = in_kernel(s)
        ours[chain_key(syms, s["tid"], kernel_mode, addrs,
                       kernel_keep if kernel_mode else limit)] += s["count"]
    for tid, kernel, user in perf_callchains(data):
        if tid not in kinds:
            continue
        if kernel > KERNEL_FRAMES_MAX:
            skipped += 1
            continue
        theirs[chain_key(syms, tid, kernel > 0, user, kernel_keep if kernel else limit)] += 1

    one_sided = (sum(n for k, n in ours.items() if k not in theirs),
                 sum(n for k, n in theirs.items() if k not in ours))
    measure(request, f"depth {depth}, frames of {frame_bytes} B: labelprof {sum(ours.values())} "
                     f"samples in {len(ours)} chains, perf {sum(theirs.values())} in "
                     f"{len(theirs)} chains, {len(set(ours) & set(theirs))} chains in both; "
                     f"samples in chains only one saw: labelprof {one_sided[0]}, perf "
                     f"{one_sided[1]}; perf samples with over {KERNEL_FRAMES_MAX} kernel "
                     f"frames left out: {skipped}")
    assert sum(ours.values()) > 0, f"labelprof recorded no samples: {rec.stderr}"
    assert sum(theirs.values()) > 0, f"perf recorded no samples: {perf.stderr}"
    # every thread takes part: each has a chain above the share both must see
    total = sum(ours.values())
    compared = {k[0] for k, n in ours.items() if n >= CHAIN_SHARE_MIN * total}
    assert compared == set(kinds), (
        f"threads without a chain in {CHAIN_SHARE_MIN:.0%} of labelprof's samples: "
        f"{sorted(kinds[t] for t in set(kinds) - compared)}")
    failures = (compare(syms, "labelprof", ours, "perf", theirs) +
                compare(syms, "perf", theirs, "labelprof", ours))
    assert not failures, "\n".join(failures)

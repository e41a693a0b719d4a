"""Whole user stacks of code without frame pointers: labelprof's CFI unwinding
against ground truth.

The unwind workloads (tests/workloads/unwind_c.c, unwind_cxx.cpp) are built
-O2 -fomit-frame-pointer by gcc and by clang. Their threads burn CPU under
call paths they report: in prologues and epilogues, in a signal handler, in a
shared library reached through the PLT, in the C++ runtime throwing and
catching exceptions, in inlined template code, and at the bottom of a
recursion deeper than the frame limit. Variants of the C workload are stripped
to .eh_frame, or keep their CFI only in .debug_frame of a separate debug file
(found by .gnu_debuglink next to the binary, or by build id under
/usr/lib/debug). labelprof and `perf record --call-graph dwarf` (which copies
the stack and unwinds offline, an independent unwinder) sample the same
threads at once, and every labelprof stack is held to both truths:

- complete: it ends with the thread's path (from the report) and glibc's
  thread or program start, in at least COMPLETE_MIN of each thread's samples;
- no invented frames: every callee <- caller step labelprof shows, perf showed
  in the same process too, or the workload's path has it;
- the stacks either tool sees often, the other sees too;
- labels exactly the thread's;
- a walk that stops before the outermost frame says so (ustack_truncated),
  and the recursion is cut at the frame limit with nothing but its frames;
- the C workload's main thread calls through a frame gcc realigns beside a
  dynamic allocation, whose CFA is *(rbp - 8): its leaf samples have the whole
  chain through it, as perf's do, with no frame perf's stacks do not have;
- each sample says how it was unwound ("unwind": cfi, or mixed);
- code dlopen()ed once labelprof samples (unwind_dlopen.c) gets its tables
  too, with labels off as on.

Frames of both tools are named by one symbolizer (nm on each object and its
debug file by build id, libc's from libc6-dbg) at ELF addresses: labelprof's
module_offset, minus one for return addresses, and the address of perf's
printed file offset, from which perf has already subtracted one for return
addresses. Caller steps too rare for perf to have sampled them are checked
against the machine code: the return address must follow a call to the callee.
"""

import bisect
import collections
import dataclasses
import os
import pathlib
import re
import select
import shutil
import subprocess
import time

import pytest

from conftest import (OUTPUT, count, flags_of, in_kernel, labels_of, label_set, load_json,
                      max_stack, max_user_stack, measure, names, record, recording, show, started,
                      user_frames, workload)
from test_stacks import (ENTRY, LARGE_FRAME, LEAF, SHALLOW, SMALL_FRAME, check_exact, check_flags,
                         deepstack, thread_kinds)

DURATION = 3
# perf copies this much of the user stack per sample and unwinds it offline:
# room for the frame limit's worth of recursion and for the C++ unwinder's frames.
PERF_STACK_BYTES = 16384
PERF_FREQ = 499
# The bars: whole stacks of code without frame pointers, and of python3.
COMPLETE_MIN = 0.95
PYTHON_COMPLETE_MIN = 0.90
# A stack one tool sees this often in a thread, the other must see too (where
# the other's share would be 5 samples or more: fewer could all miss by chance).
STACK_SHARE_MIN = 0.05
UNWIND_MODES = {"fp", "cfi", "mixed"}

BUILD_ID_DIR = pathlib.Path("/usr/lib/debug/.build-id")

# glibc's outermost frames above a thread's entry, outermost first: where CFI
# says the return address is undefined (clone3, _start), or, for a walk that
# stops where glibc clears the frame pointer, the frame below.
TAILS = {
    "thread": [["clone3", "start_thread"], ["start_thread"]],
    "main": [["_start", "__libc_start_main", "__libc_start_call_main"],
             ["__libc_start_main", "__libc_start_call_main"], ["__libc_start_call_main"]],
}
# The signal trampoline: the frame above it was interrupted, not called.
SIGRETURN = "__restore_rt"

# The ground truth is x86-64's (its call instruction, glibc's __restore_rt, test_stacks'
# workload); aarch64's CFI walk is held to the cfi-stacks smoke of tests/kernels.
pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64",
                                reason="the checks read x86-64 code and frames")


# ---- naming frames ------------------------------------------------------------

def build_id(path):
    out = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def build_id_path(bid):
    return BUILD_ID_DIR / bid[:2] / f"{bid[2:]}.debug"


def load_segments(path):
    """(file offset, address, file size) of an ELF file's PT_LOAD segments."""
    out = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True).stdout
    return [(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))
            for m in re.finditer(r"^\s+LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ "
                                 r"0x([0-9a-f]+)", out, re.M)]


@dataclasses.dataclass(frozen=True)
class Func:
    """A function of an object, or (start None) an address in none."""
    module: str
    start: int | None
    names: frozenset

    @property
    def key(self):
        return (self.module, self.start)

    def __str__(self):
        name = min(self.names) if self.names else "?"
        return f"{name} ({os.path.basename(self.module or '?')})"


COLD_RE = re.compile(r"\.cold(\.\d+)?$")


class Functions:
    """The functions of one ELF file by address: its symbol tables and those of
    its debug file found by build id (libc's static functions are only there),
    its PLT sections as functions "[.plt]", "[.plt.sec]", and its entry point
    as "_start" when no symbol names it (as perf does)."""

    def __init__(self, path, symbols_from=None):
        path = symbols_from or path
        spans = {}
        files = [path]
        bid = build_id(path)
        if bid and build_id_path(bid).is_file():
            files.append(build_id_path(bid))
        for f in files:
            for dynamic in ([], ["-D"]):
                out = subprocess.run(["nm", "--defined-only", "-S", *dynamic, str(f)],
                                     capture_output=True, text=True).stdout
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) == 3:  # no size
                        parts[1:1] = ["0"]
                    if len(parts) == 4 and parts[2] in "tTwWiI":
                        self._add(spans, int(parts[0], 16), int(parts[1], 16),
                                  parts[3].split("@")[0])
        out = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True).stdout
        for m in re.finditer(r"\]\s+(\.plt(?:\.sec|\.got)?)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+"
                             r"([0-9a-f]+)", out):
            self._add(spans, int(m.group(2), 16), int(m.group(3), 16), f"[{m.group(1)}]")
        out = subprocess.run(["readelf", "-hW", str(path)], capture_output=True, text=True).stdout
        m = re.search(r"Entry point address:\s+0x([0-9a-f]+)", out)
        if m and int(m.group(1), 16) and int(m.group(1), 16) not in spans:
            self._add(spans, int(m.group(1), 16), 0, "_start")
        self.starts = sorted(spans)
        # symbols without a size reach the next symbol
        self.ends = [spans[s][0] if spans[s][0] > s else
                     (self.starts[i + 1] if i + 1 < len(self.starts) else s + 1)
                     for i, s in enumerate(self.starts)]
        self.names = [frozenset(spans[s][1]) for s in self.starts]
        self.segments = load_segments(path)
        # gcc's cold partitions (NAME.cold) run in their function's frame: they are
        # that function, for the path, the call sites and perf's stacks alike
        start_of = {n: st for st in self.starts for n in spans[st][1]}
        self.parent = {}
        for i, st in enumerate(self.starts):
            parents = {start_of.get(COLD_RE.sub("", n)) for n in self.names[i]
                       if COLD_RE.search(n)}
            parents.discard(None)
            if len(parents) == 1:
                self.parent[st] = parents.pop()

    def address(self, offset):
        """The ELF address at a file offset (what perf prints), or None."""
        for seg_offset, vaddr, filesz in self.segments:
            if seg_offset <= offset < seg_offset + filesz:
                return offset - seg_offset + vaddr
        return None

    @staticmethod
    def _add(spans, start, size, name):
        end, names = spans.setdefault(start, [start, set()])
        spans[start][0] = max(end, start + size)
        names.add(name)

    def find(self, addr):
        """(start, names) of the function at ELF address addr, or None. An
        address just before a function and in none is that function's: the nop
        glibc puts before its signal trampoline, where unwinders look up the
        frame above a signal handler (its return address minus one)."""
        i = bisect.bisect_right(self.starts, addr) - 1
        # a symbol nested in a bigger one (assembly labels) must not hide it
        for j in range(i, max(i - 8, -1), -1):
            if self.ends[j] > addr:
                return self._function(j)
        k = bisect.bisect_left(self.starts, addr + 1)
        if k < len(self.starts) and self.starts[k] == addr + 1:
            return self._function(k)
        return None

    def _function(self, i):
        start = self.parent.get(self.starts[i], self.starts[i])
        return start, self.names[self.starts.index(start)] if start != self.starts[i] else \
            self.names[i]


class Symbolizer:
    """Names both tools' frames the same way. symbols_from: {path as mapped:
    file to take its symbols from} (a stripped binary's unstripped twin)."""

    def __init__(self, symbols_from=None):
        self.symbols_from = {os.path.realpath(k): v for k, v in (symbols_from or {}).items()}
        self.files = {}

    def func(self, module, addr, file_offset=False):
        """The function at an ELF address (or file offset) of module."""
        if not module or addr is None or not module.startswith("/"):
            return Func(module, None, frozenset())
        path = os.path.realpath(module)
        if path not in self.files:
            self.files[path] = (Functions(path, self.symbols_from.get(path))
                                if os.path.isfile(path) else None)
        if file_offset and self.files[path]:
            addr = self.files[path].address(addr)
        found = self.files[path] and addr is not None and self.files[path].find(addr)
        if not found:
            return Func(path, None, frozenset())
        return Func(path, found[0], found[1])

    def labelprof_stack(self, sample):
        """The functions of a labelprof sample's user frames, leaf first.
        Return addresses are looked up one byte back, in their call; the leaf
        is one too when the sample was taken in kernel mode, and the frame
        above a signal trampoline is not (the signal interrupted it there)."""
        funcs = []
        raw_prev = None
        for i, f in enumerate(user_frames(sample)):
            off = f.get("module_offset")
            addr = int(off, 16) if off else None
            called = i > 0 or in_kernel(sample)
            if addr is not None and called and not (raw_prev and SIGRETURN in raw_prev.names):
                funcs.append(self.func(f.get("module"), addr - 1))
            else:
                funcs.append(self.func(f.get("module"), addr))
            raw_prev = self.func(f.get("module"), addr)
        return funcs


def named(func, name):
    return name in func.names


class CallSites:
    """The x86-64 call instruction just before a return address: the ground
    truth for caller steps too rare for perf to have sampled."""

    # prefixes an indirect call may carry: notrack/segment, operand and address size
    PREFIXES = {0x2e, 0x3e, 0x66, 0x67}

    def __init__(self):
        self.segments = {}
        self.known = {}

    def _code_before(self, path, addr, n):
        if path not in self.segments:
            self.segments[path] = load_segments(path)
        for offset, vaddr, filesz in self.segments[path]:
            if vaddr <= addr - n and addr <= vaddr + filesz:
                with open(path, "rb") as f:
                    f.seek(offset + addr - n - vaddr)
                    return f.read(n)
        return None

    @classmethod
    def _indirect_call_length(cls, code):
        """Length of the indirect call (ff /2) at the start of code, or 0."""
        i = 0
        while i < len(code) and code[i] in cls.PREFIXES:
            i += 1
        if i < len(code) and 0x40 <= code[i] <= 0x4f:  # REX
            i += 1
        if i + 1 >= len(code) or code[i] != 0xff or (code[i + 1] >> 3) & 7 != 2:
            return 0
        mod, rm = code[i + 1] >> 6, code[i + 1] & 7
        length = i + 2
        if mod != 3:
            if rm == 4:  # SIB
                length += 1
                if mod == 0 and i + 2 < len(code) and code[i + 2] & 7 == 5:
                    length += 4
            elif mod == 0 and rm == 5:  # RIP-relative
                length += 4
            length += {1: 1, 2: 4}.get(mod, 0)
        return length

    def call_before(self, path, ret):
        """("direct", target address), ("indirect", None), or None: no call
        instruction ends at ret."""
        key = (path, ret)
        if key not in self.known:
            code = self._code_before(path, ret, 16)
            if code and code[-5] == 0xe8:
                self.known[key] = ("direct", ret + int.from_bytes(code[-4:], "little",
                                                                   signed=True))
            elif code and any(self._indirect_call_length(code[-n:]) == n for n in range(2, 10)):
                self.known[key] = ("indirect", None)
            else:
                self.known[key] = None
        return self.known[key]

    def calls(self, syms, caller, ret, callee):
        """Whether the code at caller's return address ret calls callee: a
        direct call to it or to a PLT stub (for a callee elsewhere, or the
        stub itself), or an indirect call. A tail call from the call's target
        fails: perf must have seen those."""
        call = self.call_before(caller.module, ret)
        if not call or call[0] == "indirect":
            return bool(call)
        target = syms.func(caller.module, call[1])
        if target.key == callee.key:
            return True
        # a library calls its own exported functions through its PLT too
        return any(n.startswith("[.plt") for n in target.names)


CALL_SITES = CallSites()


# ---- perf's stacks --------------------------------------------------------------

PERF_FRAME_RE = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")


def perf_record_cmd(pid, data):
    # -B -N: no build-id processing or cache (perf script reads the files in place)
    return ["perf", "record", "-B", "-N", "-e", "cpu-clock", "-F", str(PERF_FREQ),
            "--call-graph", f"dwarf,{PERF_STACK_BYTES}", "-p", str(pid), "-o", str(data),
            "--", "sleep", str(DURATION)]


def perf_stacks(data, syms):
    """(tid, user functions leaf first) of every sample perf recorded, as perf
    unwound them from the copied stacks. perf prints each frame's offset in
    its file, minus one for return addresses."""
    proc = subprocess.run(["perf", "script", "--no-inline", "-F", "tid,ip,sym,dso", "-i",
                           str(data)], capture_output=True, text=True, errors="replace",
                          timeout=600)
    assert proc.returncode == 0, f"perf script failed: {proc.stderr[-2000:]}"
    stacks = []
    for block in proc.stdout.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        tid = int(lines[0].split()[0])
        funcs = []
        for line in lines[1:]:
            m = PERF_FRAME_RE.match(line)
            assert m, f"perf script: unexpected frame line {line!r}"
            addr, dso = int(m.group(1), 16), m.group(3)
            if addr >= 1 << 63 or dso.startswith("[kernel") or (
                    dso.startswith("[") and dso not in ("[vdso]", "[unknown]")):
                continue  # kernel frames
            funcs.append(syms.func(dso, addr, file_offset=True))
        stacks.append((tid, funcs))
    return stacks


# ---- the workloads' truth ------------------------------------------------------

@dataclasses.dataclass
class Thread:
    tid: int
    name: str
    entry: str  # "main" or "thread"
    path: list  # outermost first
    calls: list  # [caller, callee] below the path
    labels: frozenset

    def known_edges(self):
        """(callee, caller) names the workload's path and calls and glibc's start make."""
        chain = TAILS[self.entry][0] + self.path
        return ({(chain[i + 1], chain[i]) for i in range(len(chain) - 1)} |
                {(callee, caller) for caller, callee in self.calls})

    def complete(self, funcs):
        """Whether a stack ends with the path and one of glibc's tails."""
        outer = funcs[::-1]
        for tail in TAILS[self.entry]:
            want = tail + self.path
            if len(outer) >= len(want) and all(named(f, n) for f, n in zip(outer, want)):
                return True
        return False

    def fits_limit(self, limit):
        return len(self.path) + len(TAILS[self.entry][0]) <= limit

    def whole(self, funcs, limit):
        """Whether perf unwound a stack to the entry, or to the frame limit
        through the path: perf's stacks that hold as ground truth. It cannot
        read .debug_frame from separate debug files, and then falls back to
        frame pointers and their wrong guesses."""
        if self.fits_limit(limit):
            return self.complete(funcs)
        return len(funcs) == limit and all(named(f, n) for f, n in zip(funcs, self.path[::-1]))


def read_threads(report):
    return {t["tid"]: Thread(t["tid"], t["name"], t["entry"], t["path"], t["calls"],
                             label_set(t["labels"])) for t in report["threads"]}


@dataclasses.dataclass
class Run:
    """One workload sampled by labelprof and perf at once."""
    name: str
    threads: dict
    samples: list  # labelprof's samples of the workload's threads
    perf: list  # (tid, funcs) of the same threads
    perf_whole: list  # those of perf's stacks unwound to the entry (Thread.whole)
    syms: Symbolizer
    stderr: str
    # perf does not read CFI from separate debug files
    perf_reads_cfi: bool = True

    def stacks(self):
        """(thread, sample, functions) of every labelprof sample, but those taken
        while the C++ runtime installs a handler's context: _Unwind_RaiseException
        then has the handler's registers and return address written into its own
        frame (uw_install_context), so the stack in memory says the handler's
        function called it, whichever unwinder reads it."""
        stacks = [(self.threads[s["tid"]], s, self.syms.labelprof_stack(s)) for s in self.samples]
        return [(t, s, funcs) for t, s, funcs in stacks if not installing_handler(funcs)]


def installing_handler(funcs):
    """Whether _Unwind_RaiseException's caller is not the throw that called it."""
    return any(named(f, "_Unwind_RaiseException") and not (
        named(c, "__cxa_throw") or named(c, "__cxa_rethrow")) for f, c in zip(funcs, funcs[1:]))


def show_funcs(funcs, limit=10):
    out = " <- ".join(str(f) for f in funcs[:limit])
    return out + (f" <- ... ({len(funcs)} frames)" if len(funcs) > limit else "")


def sample_workload(tmp_path, argv, syms, labelprof_args=()):
    """Runs a workload (its report at --output), sampled by labelprof and perf
    for DURATION seconds."""
    report_path = tmp_path / "report.json"
    data = tmp_path / "perf.data"
    with started(list(argv) + ["--output", report_path]):
        report = load_json(report_path)
        pid = report["pid"]
        with recording(tmp_path, *labelprof_args, "-p", pid) as rec:
            perf = subprocess.run(perf_record_cmd(pid, data), capture_output=True, text=True,
                                  timeout=300)
    assert perf.returncode == 0, f"perf record failed: {perf.stderr[-2000:]}"
    threads = read_threads(report)
    samples = [s for s in rec.profile.of_pids(pid) if s["tid"] in threads]
    stacks = [(tid, funcs) for tid, funcs in perf_stacks(data, syms) if tid in threads]
    whole = [(tid, funcs) for tid, funcs in stacks if threads[tid].whole(funcs, max_stack())]
    return Run(os.path.basename(argv[0]), threads, samples, stacks, whole, syms, rec.stderr)


# ---- the variants ----------------------------------------------------------------

@dataclasses.dataclass
class Variant:
    binary: str
    # where its function names come from, when not from itself
    symbols_from: str | None = None
    # a debug file to install under /usr/lib/debug/.build-id while it runs
    build_id_debug: str | None = None
    # its CFI only in a separate debug file, which perf does not read
    split_debug: bool = False


VARIANTS = {
    "c-gcc": Variant("unwind_c-gcc"),
    "c-clang": Variant("unwind_c-clang"),
    "cxx-gcc": Variant("unwind_cxx-gcc"),
    "cxx-clang": Variant("unwind_cxx-clang"),
    "c-gcc-stripped": Variant("unwind_c-gcc-stripped", symbols_from="unwind_c-gcc"),
    "c-gcc-debuglink": Variant("unwind_c-gcc-debuglink", split_debug=True),
    "c-gcc-buildid": Variant("unwind_c-gcc-buildid", split_debug=True,
                             build_id_debug="unwind-debug/unwind_c-gcc-buildid.debug"),
}


class InstalledDebugFile:
    """A debug file under /usr/lib/debug/.build-id for as long as the block runs."""

    def __init__(self, binary, debug):
        bid = build_id(binary)
        assert bid, f"{binary} has no build id"
        self.dest = build_id_path(bid)
        self.debug = debug
        self.made_dirs = []

    def __enter__(self):
        assert not self.dest.exists(), f"{self.dest} exists already"
        for d in reversed([self.dest.parent, *self.dest.parent.parents]):
            if not d.exists():
                d.mkdir()
                self.made_dirs.append(d)
        shutil.copyfile(self.debug, self.dest)
        return self

    def __exit__(self, *exc):
        self.dest.unlink(missing_ok=True)
        for d in reversed(self.made_dirs):
            d.rmdir()


@pytest.fixture(scope="module", params=list(VARIANTS))
def run(request, tmp_path_factory):
    """Each variant sampled once, for every test of this file."""
    assert shutil.which("perf"), "perf (Debian's linux-perf) is not installed: make deps"
    v = VARIANTS[request.param]
    binary = workload(v.binary)
    syms = Symbolizer({binary: workload(v.symbols_from)} if v.symbols_from else None)
    tmp_path = tmp_path_factory.mktemp(request.param)
    argv = [binary]
    if v.binary.startswith("unwind_c-"):  # its recursion beyond labelprof's limit too
        argv += ["--depth", str(max_user_stack() + 100)]
    if v.build_id_debug:
        with InstalledDebugFile(binary, workload(v.build_id_debug)):
            # perf reads the debug file while it unwinds: before it goes
            run = sample_workload(tmp_path, argv, syms)
    else:
        run = sample_workload(tmp_path, argv, syms)
    run.perf_reads_cfi = not v.split_debug
    return run


# ---- checks shared by the tests -------------------------------------------------

def completeness(run, limit):
    """Per thread within the frame limit: (complete, total) samples."""
    per = collections.defaultdict(lambda: [0, 0])
    for thread, s, funcs in run.stacks():
        if thread.fits_limit(limit):
            per[thread.name][0] += s["count"] if thread.complete(funcs) else 0
            per[thread.name][1] += s["count"]
    return per


def check_complete(request, run, what=""):
    limit = max_stack()
    per = completeness(run, limit)
    perf_per = collections.defaultdict(lambda: [0, 0])
    for tid, funcs in run.perf:
        thread = run.threads[tid]
        if thread.fits_limit(limit):
            perf_per[thread.name][0] += thread.complete(funcs)
            perf_per[thread.name][1] += 1
    figures = ", ".join(f"{name} {c}/{n} ({c / n:.0%}; perf {perf_per[name][0]}/"
                        f"{perf_per[name][1]})" for name, (c, n) in sorted(per.items()))
    measure(request, f"{run.name}{what}: complete stacks per thread: {figures}")
    expected = {t.name for t in run.threads.values() if t.fits_limit(limit)}
    assert set(per) == expected, f"threads never sampled: {sorted(expected - set(per))}"
    short = {name: c / n for name, (c, n) in per.items() if c < COMPLETE_MIN * n}
    if short:
        examples = [f"  {t.name}: {show_funcs(funcs)}" for t, s, funcs in run.stacks()
                    if t.name in short and not t.complete(funcs)][:6]
        pytest.fail(f"{run.name}{what}: under {COMPLETE_MIN:.0%} of the samples reach the "
                    f"thread's entry ({', '.join(f'{n} {v:.0%}' for n, v in short.items())}); "
                    f"incomplete stacks, leaf first:\n" + "\n".join(examples))


def invented_frames(run):
    """Caller frames whose step from their callee neither perf made (in a
    whole stack of any thread of the workload), nor the workload's own calls,
    and whose return address does not follow a call instruction: (frames, of
    frames, examples)."""
    seen = set()
    for _, funcs in run.perf_whole:
        seen.update((a.key, b.key) for a, b in zip(funcs, funcs[1:]))
    invented, total, examples = 0, 0, []
    for thread, s, funcs in run.stacks():
        known = thread.known_edges()
        frames = user_frames(s)
        for i in range(1, len(funcs)):
            callee, caller = funcs[i - 1], funcs[i]
            # Python frames stand where _PyEval_EvalFrameDefault ran them: no native step
            if "python" in (frames[i].get("kind"), frames[i - 1].get("kind")):
                continue
            total += s["count"]
            if (callee.key, caller.key) in seen or any(
                    named(callee, a) and named(caller, b) for a, b in known):
                continue
            # the call site decides for an unnamed caller too (static functions)
            if caller.module and CALL_SITES.calls(
                    run.syms, caller, int(frames[i]["module_offset"], 16), callee):
                continue
            invented += s["count"]
            if len(examples) < 5:
                examples.append(f"  {thread.name}: {caller} as the caller of {callee} in "
                                f"{show_funcs(funcs, 12)}")
    return invented, total, examples


# ---- the tests ---------------------------------------------------------------------

def test_labels_exact(request, run):
    """Every sample of a workload thread carries exactly the labels it set."""
    per = collections.Counter()
    wrong = []
    for s in run.samples:
        thread = run.threads[s["tid"]]
        per[thread.name] += s["count"]
        if labels_of(s) != thread.labels:
            wrong.append((thread, s))
    measure(request, f"{run.name}: samples per thread {dict(per)}, "
                     f"{sum(s['count'] for _, s in wrong)} with other labels")
    assert count(run.samples) > 0, f"labelprof recorded no samples: {run.stderr}"
    assert not wrong, "samples with labels other than their thread's:\n" + "\n".join(
        f"  {t.name}: {dict(s['labels'])}, expected {sorted(t.labels)}" for t, s in wrong[:5])


def test_whole_stacks(request, run):
    """At least COMPLETE_MIN of each thread's samples (but the recursion's, deeper
    than the limit) reach its entry: the path it reports, then glibc's start."""
    check_complete(request, run)


def test_no_invented_frames(request, run):
    """Every caller labelprof puts above a function, perf saw there too (or the
    workload says it is there)."""
    assert run.perf, "perf recorded no samples of the workload"
    invented, total, examples = invented_frames(run)
    measure(request, f"{run.name}: {invented} invented frames of {total} caller frames "
                     f"(perf: {len(run.perf_whole)}/{len(run.perf)} samples unwound whole)")
    assert not invented, (f"{invented}/{total} caller frames perf never saw in the same place:\n"
                          + "\n".join(examples))


def test_same_stacks_as_perf(request, run):
    """Per thread, a stack either tool sees in STACK_SHARE_MIN of the samples,
    the other sees too; in the threads perf unwound whole (not those of code
    whose CFI is only in a separate debug file, which perf does not read)."""
    ours, theirs = collections.defaultdict(collections.Counter), \
        collections.defaultdict(collections.Counter)
    for tid, funcs in run.perf_whole:
        theirs[run.threads[tid].name][tuple(f.key for f in funcs)] += 1
    for thread, s, funcs in run.stacks():
        # perf's stacks end at its frame limit, labelprof's go on: their common part
        if not thread.fits_limit(max_stack()):
            funcs = funcs[:max_stack()]
        if thread.name in theirs:
            ours[thread.name][tuple(f.key for f in funcs)] += s["count"]
    describe = {}
    for funcs in [funcs for _, _, funcs in run.stacks()] + [funcs for _, funcs in run.perf]:
        describe.setdefault(tuple(f.key for f in funcs), show_funcs(funcs, 8))
    missing = []
    for name_a, a, name_b, b in (("labelprof", ours, "perf", theirs),
                                 ("perf", theirs, "labelprof", ours)):
        for thread in sorted(a):
            total, total_b = sum(a[thread].values()), sum(b[thread].values())
            for key, n in a[thread].most_common():
                if (n >= STACK_SHARE_MIN * total and n * total_b >= 5 * total
                        and key not in b[thread]):
                    missing.append(f"  {thread}: {n}/{total} {name_a} samples in a stack "
                                   f"{name_b} never recorded ({len(key)} frames): "
                                   f"{describe[key]}")
    same = sum(n for t in ours for k, n in ours[t].items() if k in theirs[t])
    left_out = sorted({t.name for t in run.threads.values()} - set(theirs))
    measure(request, f"{run.name}: {same}/{count(run.samples)} labelprof samples in stacks perf "
                     f"recorded too; {len(missing)} frequent stacks only one tool saw; threads "
                     f"perf unwound no whole stack of: {left_out}")
    # where perf reads the CFI, every thread is compared
    assert not (run.perf_reads_cfi and left_out), (
        f"perf unwound no whole stack of threads {left_out}: {len(run.perf)} perf samples")
    assert not missing, "\n".join(missing)


def test_truncation_flagged(request, run):
    """A walk that stops short says so, one that reaches the entry does not; the
    recursion's stacks are the frame limit's worth of its innermost frames."""
    limit = max_user_stack()
    flagged_complete, unflagged_short, deep_wrong = [], [], []
    lengths = collections.Counter()
    for thread, s, funcs in run.stacks():
        truncated = "ustack_truncated" in flags_of(s)
        if not thread.fits_limit(limit):
            lengths[len(funcs)] += s["count"]
            want = thread.path[::-1][:limit]
            if not truncated or len(funcs) != limit or not all(
                    named(f, n) for f, n in zip(funcs, want)):
                deep_wrong.append((thread, s, funcs))
        elif thread.complete(funcs) and truncated:
            flagged_complete.append((thread, s, funcs))
        elif not thread.complete(funcs) and not truncated:
            unflagged_short.append((thread, s, funcs))
    measure(request, f"{run.name}: beyond the limit of {limit}: frames per sample "
                     f"{dict(lengths)}, {sum(s['count'] for _, s, _ in deep_wrong)} samples wrong "
                     f"or not flagged; complete but flagged "
                     f"{sum(s['count'] for _, s, _ in flagged_complete)}, short and not flagged "
                     f"{sum(s['count'] for _, s, _ in unflagged_short)}")
    failures = [f"  {t.name} ({len(f)} frames, flags {sorted(flags_of(s))}): {show_funcs(f, 4)}"
                for t, s, f in deep_wrong[:3]]
    failures += [f"  complete but flagged ustack_truncated: {t.name}: {show_funcs(f, 6)}"
                 for t, _, f in flagged_complete[:3]]
    failures += [f"  short and not flagged ustack_truncated: {t.name}: {show_funcs(f, 6)}"
                 for t, _, f in unflagged_short[:3]]
    assert not failures, (f"expected {limit} frames of the recursion's innermost ones flagged "
                          f"ustack_truncated, and the flag on exactly the short stacks:\n"
                          + "\n".join(failures))


# unwind_c's main thread below its path (main, chain_a, chain_b), leaf first:
# chain_realign realigns its stack beside a dynamic allocation, and gcc's CFA
# is then *(rbp - 8), above padding that chain_b varies between calls.
REALIGNED_LEAF = ["chain_burn", "chain_realign", "chain_c"]
C_VARIANTS = [name for name in VARIANTS if name.startswith("c-")]


@pytest.mark.parametrize("run", C_VARIANTS, indirect=True)
def test_realigned_frame(request, run):
    """At least COMPLETE_MIN of the main thread's samples in chain_burn have the
    whole chain through the realigned frame to main and glibc's start, as perf's
    have (where perf reads the CFI); and every caller step of the thread's stacks
    is one perf's stacks of it make (or, where perf cannot read the CFI, one the
    workload reports)."""
    main = next(t for t in run.threads.values() if t.name == "main")
    want = [REALIGNED_LEAF + main.path[::-1] + tail[::-1] for tail in TAILS["main"]]

    def whole(funcs):
        return any(len(funcs) == len(w) and all(named(f, n) for f, n in zip(funcs, w))
                   for w in want)

    ours = [(s, funcs) for t, s, funcs in run.stacks()
            if t is main and funcs and named(funcs[0], REALIGNED_LEAF[0])]
    theirs = [funcs for tid, funcs in run.perf
              if tid == main.tid and funcs and named(funcs[0], REALIGNED_LEAF[0])]
    total, complete = count(s for s, _ in ours), count(s for s, funcs in ours if whole(funcs))
    perf_complete = sum(whole(funcs) for funcs in theirs)
    steps = {(a.key, b.key) for tid, funcs in run.perf if tid == main.tid
             for a, b in zip(funcs, funcs[1:])}
    edges = main.known_edges()

    def known(callee, caller):
        if run.perf_reads_cfi:
            return (callee.key, caller.key) in steps
        return any(named(callee, a) and named(caller, b) for a, b in edges)

    unknown = [(s, funcs) for t, s, funcs in run.stacks() if t is main
               and not all(known(a, b) for a, b in zip(funcs, funcs[1:]))]
    measure(request, f"{run.name}: {complete}/{total} samples in {REALIGNED_LEAF[0]} have the "
                     f"whole chain through the realigned frame (perf {perf_complete}/"
                     f"{len(theirs)}); {count(s for s, _ in unknown)} samples of the thread "
                     f"with a caller step perf's stacks do not have")
    assert total > 0, f"no samples of the main thread in {REALIGNED_LEAF[0]}: {run.stderr}"
    if run.perf_reads_cfi:
        assert theirs and perf_complete >= COMPLETE_MIN * len(theirs), (
            f"perf: {perf_complete}/{len(theirs)} samples with the whole chain; first others:\n"
            + "\n".join(f"  {show_funcs(f)}" for f in theirs if not whole(f))[:2000])
    assert complete >= COMPLETE_MIN * total, (
        f"{complete}/{total} samples in {REALIGNED_LEAF[0]} have the whole chain through "
        f"the realigned frame; first others, leaf first:\n" + "\n".join(
            f"  {show_funcs(funcs)} (flags {sorted(flags_of(s))})"
            for s, funcs in ours if not whole(funcs))[:3000])
    assert not unknown, (f"{count(s for s, _ in unknown)} samples of the main thread with a "
                         f"caller step perf's stacks do not have:\n" + "\n".join(
                             f"  {show_funcs(funcs)} (flags {sorted(flags_of(s))})"
                             for s, funcs in unknown[:5]))


def test_unwind_mode_reported(request, run):
    """Each sample says how it was unwound: with the default (auto), code that
    has CFI is walked by it."""
    modes = collections.Counter()
    for s in run.samples:
        modes[s.get("unwind")] += s["count"]
    measure(request, f"{run.name}: samples per unwind mode {dict(modes)}")
    assert None not in modes, (f"{modes[None]}/{count(run.samples)} samples do not say how they "
                               f"were unwound (no \"unwind\" key)")
    assert set(modes) <= {"cfi", "mixed"}, f"unwind modes {dict(modes)}: expected cfi or mixed"


def test_unwind_cfi_mode(request, tmp_path):
    """--unwind cfi: the same whole stacks, every sample unwound by CFI."""
    binary = workload("unwind_c-gcc")
    run = sample_workload(tmp_path, [binary], Symbolizer(), ["--unwind", "cfi"])
    modes = collections.Counter()
    for s in run.samples:
        modes[s.get("unwind")] += s["count"]
    measure(request, f"--unwind cfi: samples per unwind mode {dict(modes)}")
    check_complete(request, run, " (--unwind cfi)")
    assert set(modes) == {"cfi"}, f"--unwind cfi: samples per unwind mode {dict(modes)}"


def test_python_busy_loop(request, tmp_path):
    """Debian's python3, built without frame pointers, in a busy loop: at least
    PYTHON_COMPLETE_MIN of its samples reach Py_BytesMain and glibc's program
    start, with no invented frames."""
    python = os.path.realpath("/usr/bin/python3")
    data = tmp_path / "perf.data"
    syms = Symbolizer()
    proc = subprocess.Popen([python, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
    try:
        with recording(tmp_path, "-p", proc.pid) as rec:
            perf = subprocess.run(perf_record_cmd(proc.pid, data), capture_output=True,
                                  text=True, timeout=300)
        assert perf.returncode == 0, f"perf record failed: {perf.stderr[-2000:]}"
    finally:
        proc.kill()
        proc.wait()
    entry = Thread(proc.pid, "python3", "main", ["Py_BytesMain"], [], frozenset())

    def reaches(funcs):
        """Py_BytesMain, then (outer) glibc's program start."""
        inner = next((i for i, f in enumerate(funcs) if named(f, "Py_BytesMain")), None)
        return inner is not None and any(named(f, "__libc_start_call_main")
                                         for f in funcs[inner:])

    samples = rec.profile.of_pids(proc.pid)
    stacks = [(tid, funcs) for tid, funcs in perf_stacks(data, syms) if tid == proc.pid]
    whole = [(tid, funcs) for tid, funcs in stacks if reaches(funcs)]
    run = Run("python3", {proc.pid: entry}, [s for s in samples if s["tid"] == proc.pid],
              stacks, whole, syms, rec.stderr)
    complete = sum(s["count"] for _, s, funcs in run.stacks() if reaches(funcs))
    total = count(run.samples)
    invented, frames, examples = invented_frames(run)
    measure(request, f"{python}: {complete}/{total} samples reach Py_BytesMain and the "
                     f"program start (perf {len(whole)}/{len(stacks)}); {invented} invented "
                     f"frames of {frames}")
    assert total > 0, f"labelprof recorded no samples of python3: {rec.stderr}"
    assert complete >= PYTHON_COMPLETE_MIN * total, (
        f"{complete}/{total} samples of python3 reach Py_BytesMain and the program start; "
        f"first others, leaf first:\n" + "\n".join(
            f"  {show_funcs(funcs)}" for _, s, funcs in run.stacks() if not reaches(funcs))[:3000])
    assert not invented, (f"{invented}/{frames} caller frames perf never saw in the same place:\n"
                          + "\n".join(examples))


def test_unwind_fp_mode(request, tmp_path):
    """--unwind fp on code with frame pointers: the frame-record chains
    test_stacks checks, whole, every sample unwound by frame pointers."""
    report = tmp_path / "deepstack.json"
    with started(deepstack(report, SHALLOW)):
        pid, kinds = thread_kinds(report)
        binary = os.readlink(f"/proc/{pid}/exe")
        rec = record(tmp_path, "--unwind", "fp", "-p", pid, duration=DURATION)
    samples = rec.profile.of_pids(pid)
    assert count(samples) > 0, f"no samples of deepstack: {rec.stderr}"
    check_flags(samples)
    per_kind, _, left_out = check_exact(samples, kinds, SHALLOW, binary)
    modes = collections.Counter()
    for s in samples:
        modes[s.get("unwind")] += s["count"]
    measure(request, f"--unwind fp: exact chains per thread kind {dict(per_kind)}, left out "
                     f"{left_out}; samples per unwind mode {dict(modes)}")
    assert set(modes) == {"fp"}, f"--unwind fp: samples per unwind mode {dict(modes)}"


# glibc's own names of the outermost functions of TAILS
GLIBC_ALIASES = {"__clone3": "clone3", "__libc_start_main_impl": "__libc_start_main"}


@pytest.mark.parametrize("frame_bytes", [SMALL_FRAME, LARGE_FRAME], ids=["small", "large"])
def test_auto_frame_pointer_code(request, tmp_path, frame_bytes):
    """The default --unwind auto on code with frame pointers and CFI: the CFI walk
    takes every descend() frame from the row of the one before (the same call
    site), reads the stack from copies of its pages (small frames) or word by
    word (frames of 256 KiB, far from the stack pointer), and must give the exact
    chain, continued through glibc's thread and program start to the outermost
    frame, which the frame-record chain does not reach."""
    report = tmp_path / "deepstack.json"
    with started(deepstack(report, SHALLOW, frame_bytes, libc_threads=0,
                           main=frame_bytes == SMALL_FRAME)):
        pid, kinds = thread_kinds(report)
        rec = record(tmp_path, "-p", pid, duration=DURATION)
    samples = rec.profile.of_pids(pid)
    assert count(samples) > 0, f"no samples of deepstack: {rec.stderr}"
    check_flags(samples)
    per_kind, wrong = collections.Counter(), []
    for s in samples:
        kind = kinds.get(s["tid"])
        if kind is None:
            continue  # the thread that waits for stdin
        frames = user_frames(s)
        chain = [LEAF[kind]] + ["descend"] * SHALLOW + [ENTRY[kind]]
        tail = TAILS["main" if kind == "main" else "thread"][0][::-1]
        per_kind[kind] += s["count"]
        got = [GLIBC_ALIASES.get(n, n) for n in names(frames)]
        if got != chain + tail or "ustack_truncated" in flags_of(s):
            wrong.append(s)
    measure(request, f"frames of {frame_bytes} B, --unwind auto: {count(samples)} samples, "
                     f"per thread kind {dict(per_kind)}, not the exact chain {len(wrong)}")
    assert not wrong, (f"{count(wrong)} samples without the exact chain; first ones:\n" +
                       "\n".join(f"  {show(user_frames(s), 3)} ... {names(user_frames(s))[-5:]}"
                                 for s in wrong[:5]))
    for kind in set(kinds.values()) - {"libc"}:
        assert per_kind[kind] > 0, f"no samples of the {kind} threads: {dict(per_kind)}"


# Samples in code dlopen()ed after labelprof inspected the process may be cut
# short until userspace has built the new code's tables (it hears of the code
# from the first such sample): here 0 to 6 of about 1500 samples in 3 s were,
# where a labelprof that never hears of it cuts every one (a single frame).
DLOPEN_COMPLETE_MIN = 0.90


def await_stderr(wl, marker, timeout=30):
    """Reads a started workload's stderr until marker, failing after timeout seconds."""
    seen = b""
    deadline = time.monotonic() + timeout
    fd = wl.proc.stderr.fileno()
    while marker not in seen:
        readable, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        chunk = os.read(fd, 4096) if readable else b""
        if not chunk:
            pytest.fail(f"workload never said {marker!r}: {seen.decode(errors='replace')}")
        seen += chunk


@pytest.mark.parametrize("label_args", [["--no-labels"], []], ids=["no-labels", "labels"])
def test_dlopen_after_start(request, tmp_path, label_args):
    """Code without frame pointers dlopen()ed once labelprof samples the process:
    the BPF program sees the process's executable mappings change (with labels
    off too), userspace inspects it again and builds the new code's tables, and
    the stacks through the library reach the thread's entry, in at least
    DLOPEN_COMPLETE_MIN of the samples there. The workload is labelled from
    its start: labelprof looks at a process without labels again for a few
    seconds anyway (its label library may be on its way), which would find
    the new code by chance."""
    library = OUTPUT / "lib" / "libunwind_lib-gcc.so"
    report_path = tmp_path / "report.json"
    with started([workload("unwind_dlopen"), "--library", library,
                  "--output", report_path]) as wl:
        with recording(tmp_path, *label_args, "-p", wl.pid) as rec:
            wl.proc.stdin.write(b"dlopen\n")
            wl.proc.stdin.flush()
            await_stderr(wl, b"loaded")
            time.sleep(DURATION)
    report = load_json(report_path)
    threads = read_threads(report)
    run = Run("unwind_dlopen", threads, [s for s in rec.profile.of_pids(report["pid"])
                                         if s["tid"] in threads], [], [], Symbolizer(),
              rec.stderr)
    in_library = [(t, s, funcs) for t, s, funcs in run.stacks()
                  if funcs and funcs[0].module == os.path.realpath(library)]
    complete = sum(s["count"] for t, s, funcs in in_library if t.complete(funcs))
    total = sum(s["count"] for _, s, _ in in_library)
    measure(request, f"{' '.join(label_args) or 'labels on'}: {complete}/{total} samples in "
                     f"the dlopen()ed library reach the thread's entry "
                     f"({count(run.samples)} samples of the thread)")
    assert total > 0, f"no samples in {library}: {rec.stderr}"
    # labels on: the thread's own (set before it calls the library); off: none
    wrong = [s for t, s, _ in in_library
             if labels_of(s) != (frozenset() if label_args else t.labels)]
    assert not wrong, f"{count(wrong)} samples with other labels, e.g. {wrong[0].get('labels')}"
    assert complete >= DLOPEN_COMPLETE_MIN * total, (
        f"{complete}/{total} samples in the dlopen()ed library reach the thread's entry; "
        f"first others, leaf first:\n" + "\n".join(
            f"  {show_funcs(funcs)} (flags {sorted(flags_of(s))})"
            for t, s, funcs in in_library if not t.complete(funcs))[:3000])

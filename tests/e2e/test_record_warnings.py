"""What record and top say of a process's labels is decided from what was
sampled: a process that loads its label library late (dlopen) is not told it
publishes no labels, and one that publishes only an OpenTelemetry process
context (OTEP 4719: resource attributes, no thread labels) is told that."""

import re
import subprocess
import sys
import textwrap

from conftest import LABELPROF, OUTPUT, load_json, started

LIB = OUTPUT / "lib" / "libcustomlabels.so"

# Waits for a line on stdin, then loads the label library, labels its thread and
# burns until stdin ends.
LATE_LIBRARY = textwrap.dedent(f"""
    import ctypes, os, sys, threading
    print("late: ready", file=sys.stderr, flush=True)
    if not sys.stdin.readline():
        sys.exit(0)
    threading.Thread(target=lambda: (sys.stdin.readline(), os._exit(0)), daemon=True).start()
    lib = ctypes.CDLL({str(LIB)!r})
    assert lib.custom_labels_set(b"tenant", 6, b"late", 4) == 0
    while True:
        sum(range(1000))
""")

# Publishes a process context by hand, as an OpenTelemetry SDK would (no label
# library: no thread labels), then burns.
PROCESS_CONTEXT_ONLY = textwrap.dedent("""
    import ctypes, mmap, os, struct, sys, time

    def field(num, payload):
        return bytes([num << 3 | 2, len(payload)]) + payload

    value = field(1, b"ctx-only")
    kv = field(1, b"service.name") + field(2, value)
    payload = field(1, field(1, kv))
    fd = os.memfd_create("OTEL_CTX")
    os.ftruncate(fd, 4096)
    m = mmap.mmap(fd, 4096)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    m[64:64 + len(payload)] = payload
    m[8:32] = struct.pack("<IIQQ", 2, len(payload), time.time_ns(), base + 64)
    m[0:8] = b"OTEL_CTX"  # last: the signature makes the rest valid
    print("ctx: ready", file=sys.stderr, flush=True)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        sum(range(1000))
""")


def python_loading(lib):
    """python3 made able to dlopen lib: a sanitized build's library needs its
    sanitizer runtimes loaded first (python leaks by design: no leak check)."""
    out = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    runtimes = [n for n in re.findall(r"\(NEEDED\).*\[(.+)\]", out)
                if n.startswith(("libasan", "libubsan"))]
    if not runtimes:
        return [sys.executable]
    paths = [subprocess.run(["gcc", f"-print-file-name={n}"], capture_output=True, text=True,
                            check=True).stdout.strip() for n in runtimes]
    return ["env", "LD_PRELOAD=" + " ".join(paths), "ASAN_OPTIONS=detect_leaks=0",
            sys.executable]


def test_late_label_library_is_no_false_warning(tmp_path):
    out = tmp_path / "late.json"
    with started([*python_loading(LIB), "-c", LATE_LIBRARY]) as wl:
        rec = subprocess.Popen([str(LABELPROF), "record", "-p", str(wl.pid), "-d", "3", "-o",
                                str(out)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        lines = []
        for line in rec.stderr:
            lines.append(line)
            if line.startswith("labelprof: sampling"):
                break
        # the library comes once sampling runs
        wl.proc.stdin.write(b"go\n")
        wl.proc.stdin.flush()
        err = "".join(lines) + rec.stderr.read()
        assert rec.wait(timeout=60) == 0, err
    assert "publishes no labels" not in err and "publishes only" not in err, err
    labelled = sum(s["count"] for s in load_json(out)["samples"]
                   if s.get("labels", {}).get("tenant") == "late")
    assert labelled > 0, "no sample of the late-labelled thread"


def test_unlabelled_process_is_still_said(tmp_path):
    """The same process never given its line: no labels, the warning at the end."""
    with started([sys.executable, "-c", LATE_LIBRARY]) as wl:
        proc = subprocess.run([str(LABELPROF), "record", "-p", str(wl.pid), "-d", "1", "-o",
                               str(tmp_path / "none.json")], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    warning = f"labelprof: pid {wl.pid} publishes no labels (see labelprof inspect {wl.pid})"
    assert warning in proc.stderr.splitlines(), proc.stderr


def test_process_context_only_is_said_as_such(tmp_path):
    out = tmp_path / "ctx.json"
    with started([sys.executable, "-c", PROCESS_CONTEXT_ONLY]) as wl:
        rec = subprocess.run([str(LABELPROF), "record", "-p", str(wl.pid), "-d", "2", "-o",
                              str(out)], stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=60)
        top = subprocess.run([str(LABELPROF), "top", "-p", str(wl.pid), "-n", "1"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=60)
        wl.proc.kill()
    samples = load_json(out)["samples"]
    assert samples and all(s.get("labels") == {"service.name": "ctx-only"} and
                           s.get("label_sources") == {"service.name": "otel_process"}
                           for s in samples), samples[:3]
    want = (f"labelprof: pid {wl.pid} publishes only an OpenTelemetry process context "
            f"(resource attributes, on every sample), no thread labels (see labelprof "
            f"inspect {wl.pid})")
    for name, proc in (("record", rec), ("top", top)):
        assert proc.returncode == 0, proc.stderr
        assert want in proc.stderr.splitlines(), f"{name}: {proc.stderr}"
        assert "publishes no labels" not in proc.stderr, f"{name}: {proc.stderr}"

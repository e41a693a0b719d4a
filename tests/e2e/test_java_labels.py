"""Labels from Java code (java/, dev.labelprof.customlabels; docs/java.md).

The library's own test (java/test/CustomLabelsTest.java) checks what
libcustomlabels publishes on each thread: scopes, nesting, errors, tasks on
pools, the cache past its bound. Then tests/workloads/java/LabelBurn.java is
profiled: platform threads and the tasks of a wrapped thread pool burn CPU in
burnN only under label set N, switching every 1-5 ms (set 3 with an
OpenTelemetry thread context too), platform threads in burnNone without labels
in between, pool threads in burnPool under their own labels after each task.
A sample's function is its innermost user frame, named by the JVM's own map of
its compiled code (/tmp/perf-PID.map, written at exit), and must carry exactly
that function's labels; each function's share of the samples must match its
share of the CPU time the workload measured. The Java examples of docs/java.md
compile and run."""

import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import (ATTRIBUTION_MIN, OUTPUT, REPO, check_exit, count, load_json, measure,
                      overlap_fraction, record, started, user_frames)

DURATION = 4
SHARE_TOLERANCE = 0.03
# Burn samples named by the perf map vs frequency x burn CPU time: most burn
# samples are in compiled burn code, a few in the clock read or the interpreter.
NAMED_MIN = 0.5


def jdk_tool(name):
    """The JDK tool beside the javac the build used (java/build.mk)."""
    javac = shutil.which("javac")
    assert javac, "javac not found: run 'make deps'"
    return str(pathlib.Path(os.path.realpath(javac)).parent / name)


def classpath(*jars):
    for jar in jars:
        assert jar.is_file(), f"{jar} is missing: build it with 'make OUTPUT={OUTPUT} test-build'"
    return ":".join(map(str, jars))


JVM = [f"-Djava.library.path={OUTPUT / 'lib'}"]


def test_library():
    """The library's own checks, with the JVM checking every JNI call."""
    cp = classpath(OUTPUT / "lib/customlabels.jar", OUTPUT / "tests/customlabels-test.jar")
    proc = subprocess.run([jdk_tool("java"), "-Xcheck:jni", *JVM, "-cp", cp, "CustomLabelsTest"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checks passed" in proc.stdout, proc.stdout
    assert "WARNING" not in proc.stderr, proc.stderr


# docs/java.md's examples as the body of a method whose parameters are the names
# they use; handle() notes the labels each request ran with.
GUIDE_HARNESS = """
import dev.labelprof.customlabels.*;
import java.util.*;
import java.util.concurrent.*;
{imports}

public final class GuideJava {{
    static final List<Map<String, String>> SEEN = new ArrayList<>();

    static void handle(Object request) {{
        SEEN.add(CustomLabels.current());
    }}

    static void examples(String tenant, String endpoint, Object request, Runnable task,
            Runnable runnable, byte[] traceId, byte[] spanId) throws Exception {{
{body}
    }}

    public static void main(String[] args) throws Exception {{
        examples("acme", "/search", new Object(), () -> {{}}, () -> {{}}, new byte[16],
                new byte[8]);
        System.out.println(SEEN);
        System.exit(0);
    }}
}}
"""


def test_guide_examples(tmp_path):
    """docs/java.md's examples compile against the library and run."""
    guide = (REPO / "docs/java.md").read_text()
    blocks = re.findall(r"```java\n(.*?)```", guide, re.S)
    assert blocks, "no Java example in docs/java.md"
    lines = "".join(blocks).splitlines()
    src = tmp_path / "GuideJava.java"
    src.write_text(GUIDE_HARNESS.format(
        imports="\n".join(x for x in lines if x.startswith("import ")),
        body="\n".join(x for x in lines if not x.startswith("import "))))
    jar = classpath(OUTPUT / "lib/customlabels.jar")
    for argv in ([jdk_tool("javac"), "--release", "17", "-cp", jar, "-d", tmp_path, src],
                 # the library named by the property, not found on the library path
                 [jdk_tool("java"), f"-Ddev.labelprof.customlabels.lib={OUTPUT / 'lib'}"
                  "/libcustomlabels-jni.so", "-cp", f"{jar}:{tmp_path}", "GuideJava"]):
        proc = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # handle() ran twice: under both labels, then with none (an OTel context only)
    assert proc.stdout.strip() == "[{endpoint=/search, tenant=acme}, {}]", proc.stdout


def perf_map(pid):
    """(start, end, function) of the JVM's compiled code, sorted; the file removed."""
    path = pathlib.Path(f"/tmp/perf-{pid}.map")
    assert path.is_file(), f"{path}: the JVM wrote no map of its compiled code"
    ranges = []
    for line in path.read_text(errors="replace").splitlines():
        start, size, name = line.split(" ", 2)
        # "long LabelBurn.burn0(long)" -> burn0
        method = name.split("(", 1)[0].rsplit(" ", 1)[-1]
        ranges.append((int(start, 16), int(start, 16) + int(size, 16),
                       method.rsplit(".", 1)[-1]))
    path.unlink()
    return sorted(ranges)


def leaf_function(sample, ranges, names):
    """The burn function of names the innermost user frame is in, or None: by its
    name when labelprof names it (a Java method as Class.method), else by its
    address in the JVM's map."""
    frames = user_frames(sample)
    if not frames:
        return None
    if frames[0].get("function"):
        method = re.split(r"[.:]", frames[0]["function"].split("(", 1)[0])[-1]
        return method if method in names else None
    pc = int(frames[0]["address"], 16)
    for start, end, fn in ranges:
        if start <= pc < end:
            return fn if fn in names else None
    return None


@pytest.mark.parametrize("mode", ["pid", "command"])
def test_java_attribution(request, tmp_path, mode):
    """-p PID on a running JVM, or -- java ...: profiled from its start, the JVM loads
    the library in main() and waits a second (labelprof inspects it again) before
    it burns."""
    report_path = tmp_path / "labelburn.json"
    cp = classpath(OUTPUT / "lib/customlabels.jar", OUTPUT / "workloads/labelburn.jar")
    argv = [jdk_tool("java"), *JVM, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
            # every burn function compiled by itself: a frame of its own
            "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,LabelBurn::burn*",
            "-cp", cp, "LabelBurn", "--threads", "2", "--pool", "2", "--interval", "1000,5000",
            "--output", report_path]
    if mode == "pid":
        with started(argv + ["--wait-stdin"], ready_timeout=60) as wl:
            rec = record(tmp_path, "-p", wl.pid, duration=DURATION)
        check_exit(wl)
    else:
        rec = record(tmp_path, "--", *argv, "--duration", DURATION, "--start-delay-ms", 1000)
    report = load_json(report_path)
    ranges = perf_map(report["pid"])
    prof = rec.profile

    resource = report["resource"]
    otel = report["otel"]
    expected = {}
    for s in report["sets"] + [report["unlabelled"], report["pool"]]:
        labels = dict(s["labels"], **resource)
        if s["id"] == otel["set"]:
            labels.update({k: v for k, v in otel.items() if k != "set"})
        expected[s["function"]] = labels
    ids = {s["id"]: s["function"] for s in report["sets"] + [report["unlabelled"],
                                                              report["pool"]]}

    right = dict.fromkeys(expected, 0)
    total = dict.fromkeys(expected, 0)
    # samples of the sets' functions on pool threads (the JVM names threads as Java does)
    in_pool = 0
    sets = {s["function"] for s in report["sets"]}
    wrong = []
    samples = prof.of_pids(report["pid"])
    for s in samples:
        fn = leaf_function(s, ranges, expected)
        if fn is None:
            continue
        total[fn] += s["count"]
        if fn in sets and s["comm"] == "pool":
            in_pool += s["count"]
        if (s.get("labels") or {}) == expected[fn]:
            right[fn] += s["count"]
        else:
            wrong.append((fn, s["count"], s.get("labels"), s.get("flags")))

    window = (prof.start_ns, prof.start_ns + prof.duration_ns)
    cpu = dict.fromkeys(expected, 0.0)
    for _tid, k, start, end, cpu_ns in report["intervals"]:
        cpu[ids[k]] += cpu_ns * overlap_fraction(start, end, *window)
    cpu_total = sum(cpu.values())
    named = sum(total.values())
    expected_samples = prof.frequency * cpu_total / 1e9
    measure(request, f"{count(samples)} samples, {named} in burn functions "
                     f"({named / max(expected_samples, 1):.1%} of {expected_samples:.0f} "
                     f"expected from their CPU time; {in_pool} in pool tasks), "
                     f"{sum(right.values())}/{named} correctly labelled")

    assert cpu_total > 0, "the workload burned no CPU inside the recording's time window"
    assert named >= NAMED_MIN * expected_samples, (
        f"{named} samples in burn functions, expected about {expected_samples:.0f}")
    assert in_pool > 0, "no sample of a labelled set in a pool task"
    for fn in expected:
        assert total[fn] > 0, f"no sample in {fn}"
        assert right[fn] / total[fn] >= ATTRIBUTION_MIN, (
            f"{fn}: {right[fn]}/{total[fn]} samples carry exactly its labels "
            f"{expected[fn]}; wrong: {wrong[:5]}")
        sample_share, cpu_share = total[fn] / named, cpu[fn] / cpu_total
        assert abs(sample_share - cpu_share) <= SHARE_TOLERANCE, (
            f"{fn}: {sample_share:.1%} of the samples but {cpu_share:.1%} of the CPU time")

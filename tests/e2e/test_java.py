"""Java frames against ground truth (docs/design.md section 12):
tests/workloads/java/JBurn.java burns CPU in JBurn.burnN only under the
label set=N (set with the Java library, java/), on three threads, at the
bottom of a recursion below Thread.run. Debian's OpenJDK 17 with its default
options but for the tier: interpreted only (-Xint), C1 only, C2 only, tiered.
The JVM runs before labelprof starts (record -p). The innermost Java frame
of a burn sample is the burn of its label set, the Java frames are every
call from Thread.run down (those the JIT inlined too), and no sample names
a burn other than its set's. A JNI method
that calls back into Java gives one stack through both; classes loaded and
unloaded in a loop give no frame a wrong name. labelprof inspect names the
JVM, and pprof keeps Java frames apart through convert."""

import gzip
import json
import re
import subprocess

import pytest

from conftest import LABELPROF, OUTPUT, WORKLOADS, count, load_json, measure, record, started

DURATION = 4
INNERMOST_MIN = 0.95
TOP_MIN = 0.90
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
TIERS = {"interpreted": ["-Xint"], "c1": ["-XX:TieredStopAtLevel=1"],
         "c2": ["-XX:-TieredCompilation"], "tiered": []}
BURN = re.compile(r"JBurn\.burn(\d)")


def jburn(tier, mode):
    classes = WORKLOADS / "java"
    assert (classes / "JBurn.class").is_file(), f"{classes} is missing: make test-build"
    return [JAVA, *TIERS[tier], f"-Djava.library.path={classes}:{OUTPUT / 'lib'}",
            "-cp", f"{classes}:{OUTPUT / 'lib/customlabels.jar'}", "JBurn", mode, 3]


def java_names(sample):
    """The Java frames' functions, innermost first."""
    return [f.get("function") or "" for f in sample["frames"] if f.get("kind") == "java"]


def profile_of(tmp_path, tier, mode):
    with started(jburn(tier, mode)) as wl:
        rec = record(tmp_path, "-v", "-p", wl.pid, duration=DURATION)
    assert rec.returncode == 0, rec.describe()
    return rec


def calls(set_, mode):
    """The Java frames of a burn of set_, innermost first, as JBurn makes its calls."""
    head = [f"JBurn.burn{set_}", "JBurn.burn"]
    tail = ["JBurn.step", "JBurn$Worker.run", "java.lang.Thread.run"]
    if mode == "jni":
        return head + ["JBurn.nest"] * 5 + ["JBurn.fromNative", "JBurn.upcall",
                                            "JBurn.viaNative"] + tail
    return head + ["JBurn.nest"] * 9 + tail


def check_burns(request, rec, what, mode="plain", native=None):
    """The burn threads' samples: the innermost Java frame is the burn of the
    label set, the Java frames are the calls down from Thread.run, each one;
    none names another set's burn. With native, the stack also holds that
    native function between Java frames."""
    samples = [s for s in rec.profile.samples if s["comm"].startswith("burn-")]
    burn = innermost = top = wrong = 0
    for s in samples:
        labels = s.get("labels") or {}
        if labels.get("set") not in ("0", "1", "2", "3"):
            continue
        n = s["count"]
        burn += n
        names = java_names(s)
        wrong += n * any(m and m[1] != labels["set"] for m in map(BURN.fullmatch, names))
        if names and names[0] == f"JBurn.burn{labels['set']}":
            innermost += n
        native_ok = native is None or any(
            f.get("function") == native and f.get("kind") != "java" for f in s["frames"])
        if names == calls(labels["set"], mode) and native_ok:
            top += n
    assert burn > 100, f"{burn} burn samples of {count(samples)}: {rec.describe()}"
    # the BPF walk's own counters, as -v prints them
    assert re.search(r"^labelprof: Java: \d+ interpreted frames, \d+ compiled", rec.stderr,
                     re.M), rec.stderr
    measure(request, f"{what}: {burn} burn samples, innermost {innermost / burn:.1%}, "
            f"whole stacks {top / burn:.1%}, another set's burn {wrong}")
    assert wrong == 0
    assert innermost / burn >= INNERMOST_MIN
    assert top / burn >= TOP_MIN


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_java(tmp_path, request, tier):
    rec = profile_of(tmp_path, tier, "plain")
    check_burns(request, rec, tier)


def test_java_jni(tmp_path, request):
    """burnN <- ... JBurn.fromNative <- (call stub, libjvm) <- Java_JBurn_upcall
    <- JBurn.upcall (the native method's frame) <- ... <- Thread.run."""
    rec = profile_of(tmp_path, "tiered", "jni")
    check_burns(request, rec, "jni", "jni", native="Java_JBurn_upcall")
    names = [java_names(s) for s in rec.profile.samples if s["comm"].startswith("burn-")]
    assert any("JBurn.fromNative" in n and "JBurn.upcall" in n for n in names), names[:5]


def test_java_churn(tmp_path, request):
    """A class loaded, run and unloaded in a loop while sampling: no frame of
    any thread names a method that is not the workload's or the JDK's."""
    rec = profile_of(tmp_path, "tiered", "churn")
    check_burns(request, rec, "churn")
    # hidden classes (lambdas) are named with their address: JBurn$$Lambda$1+0x...
    known = re.compile(r"(JBurn[\w$+]*|ChurnTarget|(java|jdk|sun|dev\.labelprof)\.[\w.$+]+)"
                       r"\.[\w$<>]+")
    named = [n for s in rec.profile.samples for n in java_names(s) if n]
    assert not [n for n in named if not known.fullmatch(n)], set(named)
    churn = [s for s in rec.profile.samples if s["comm"] == "churn"]
    spins = sum(s["count"] for s in churn if "ChurnTarget.spin" in java_names(s))
    measure(request, f"churn: {spins} ChurnTarget.spin samples of {count(churn)}")
    assert spins > 10, rec.describe()


def labelprof(*args):
    return subprocess.run([str(LABELPROF), *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def test_java_inspect_pprof(tmp_path):
    """inspect names the JVM and its code cache; record's pprof puts Java
    frames on their "[java]" mapping, and convert reads them back as Java
    frames, with their source files and lines."""
    out, doc = tmp_path / "java.pprof", tmp_path / "java.json"
    with started(jburn("interpreted", "plain")) as wl:
        text, js = labelprof("inspect", wl.pid), labelprof("inspect", "--json", wl.pid)
        rec = labelprof("record", "-p", wl.pid, "-d", 2, "-o", out)
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    assert re.search(r"^  Java: HotSpot 17\.\S+: /\S+/libjvm\.so, VMStructs read "
                     r"\(\d+ entries\)$", text.stdout, re.M), text.stdout
    assert re.search(r"^    code cache 0x[0-9a-f]+-0x[0-9a-f]+, \d heaps?, segments of \d+ bytes",
                     text.stdout, re.M), text.stdout
    java = json.loads(js.stdout)["java"]
    assert java["message"] == "ok" and java["version"].startswith("17."), java
    assert java["code_cache"][0] < java["code_cache"][1], java
    assert rec.returncode == 0, rec.stderr
    conv = labelprof("convert", out, "--format", "json", "-o", doc)
    assert conv.returncode == 0, conv.stderr
    assert b"[java]" in gzip.decompress(out.read_bytes())
    frames = [f for s in load_json(doc)["samples"] for f in s["frames"]
              if f.get("kind") == "java"]
    burns = [f for f in frames if BURN.fullmatch(f["function"] or "")]
    assert burns and not any(f["kernel"] for f in frames), frames[:5]
    # interpreted frames carry their line, from the method's line number table
    assert all(f["file"] == "JBurn.java" for f in burns), burns[:5]
    assert sum(bool(f["line"]) for f in burns) >= 0.9 * len(burns), burns[:5]

"""labelprof convert reads everything labelprof writes. One recording of the
demo service, saved as labelprof JSON, is converted into each format, each
of those into every format and back; what comes back has the recording's
samples: the same counts per (pid, process name, label set, stack of
function names). Folded stacks are written but not read: they must equal
the recording's own folded stacks, process name first on every line.

Input that no reader takes (empty, text, gzip of something else...) is an
error that says what the input looks like."""

import collections
import gzip
import subprocess

import pytest

from conftest import LABELPROF, check_exit, labels_of, load_json, measure, record, started, workload

# The formats labelprof writes and reads back.
READABLE = ["json", "pprof", "otlp", "otlp-json"]


def convert(src, fmt, out, *extra):
    cmd = [str(LABELPROF), "convert", str(src), "--format", fmt, "-o", str(out), *extra]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert proc.returncode == 0, (f"`{' '.join(cmd)}` exited {proc.returncode}: "
                                  f"{proc.stderr.decode(errors='replace')}")
    return out


def frame_names(frame):
    """A frame as its function names, innermost inlined first, and whether it is the kernel's."""
    inlined = tuple(i.get("function") for i in frame.get("inlined") or [])
    return inlined + (frame.get("function"), bool(frame.get("kernel")))


def summary(doc):
    """{(pid, process name, label set, stack): samples} of a labelprof JSON document."""
    names = {p["pid"]: p.get("name") for p in doc.get("processes") or []}
    out = collections.Counter()
    for s in doc["samples"]:
        stack = tuple(frame_names(f) for f in s["frames"])
        out[(s.get("pid"), names.get(s.get("pid")), labels_of(s), stack)] += s["count"]
    return out


def differences(got, want):
    """The first few keys whose counts differ, for a readable failure."""
    keys = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
    return [(k[:3], got.get(k), want.get(k)) for k in keys[:3]]


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("convert")
    with started([workload("demo"), "--duration", 60, "--threads", 2, "--quiet"]) as wl:
        rec = record(tmp, "-p", wl.pid, duration=2)
        wl.proc.terminate()
    check_exit(wl)
    doc = rec.profile.doc
    want = summary(doc)
    assert sum(want.values()) > 0, "the recording has no sample"
    assert any(k[1] for k in want), "the recording names no process"
    assert any(k[2] for k in want), "the recording has no labelled sample"
    folded = convert(rec.out, "folded", tmp / "original.folded").read_text()
    return tmp, rec.out, want, folded


@pytest.fixture(scope="module")
def in_each_format(original):
    tmp, path, _, _ = original
    return {fmt: path if fmt == "json" else convert(path, fmt, tmp / f"original.{fmt}")
            for fmt in READABLE}


def as_summary(path, tmp, name):
    return summary(load_json(convert(path, "json", tmp / f"{name}.json")))


@pytest.mark.parametrize("dst", READABLE + ["folded"])
@pytest.mark.parametrize("src", READABLE)
def test_round_trip(request, original, in_each_format, tmp_path, src, dst):
    """original -> src -> dst (-> src): the samples of the original every time."""
    _, _, want, want_folded = original
    there = convert(in_each_format[src], dst, tmp_path / f"there.{dst}")
    if dst == "folded":
        text = there.read_text()
        assert text == want_folded
        names = {k[1] for k in want if k[1]}
        assert all(line.split(";", 1)[0] in names for line in text.splitlines()), (
            f"a folded line does not start with a process name ({names}): {text[:200]}")
        return
    got = as_summary(there, tmp_path, "there")
    assert got == want, f"{src} -> {dst}: {differences(got, want)}"
    back = convert(there, src, tmp_path / f"back.{src}")
    got = as_summary(back, tmp_path, "back")
    assert got == want, f"{src} -> {dst} -> {src}: {differences(got, want)}"
    measure(request, f"{src} -> {dst} -> {src}: {sum(want.values())} samples, "
                     f"{len(want)} (pid, process, labels, stack) keys kept")


def test_input_format_names_the_encoding(original, in_each_format, tmp_path):
    """otlp-json reads with --input-format otlp (either encoding) and otlp-json."""
    _, _, want, _ = original
    for name in ["otlp", "otlp-json", "auto"]:
        out = convert(in_each_format["otlp-json"], "json", tmp_path / f"{name}.json",
                      "--input-format", name)
        assert summary(load_json(out)) == want, name


def convert_fails(path, *extra):
    cmd = [str(LABELPROF), "convert", str(path), "--format", "json", *extra]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr.decode(errors="replace")


def test_unreadable_input_says_what_it_is(original, tmp_path):
    _, path, _, folded = original
    cases = {
        "empty": (b"", "empty file"),
        "blank": (b" \n\t\n", "only white space"),
        "text": (b"hello world\n", 'text that is not a profile (it starts "hello world")'),
        "folded": (folded.encode(), "folded stacks, which labelprof writes but does not read"),
        "other.json": (b'{"name": "x", "items": [1, 2]}\n',
                       "JSON but not a labelprof or OTLP document"),
        "broken.json": (b'{"name": ', "JSON with an error"),
        "array.json": (b"[1, 2]", "a JSON array, not a labelprof or OTLP document"),
        "page.html": (b"<!DOCTYPE html><html></html>", "HTML or XML text"),
        "other.gz": (gzip.compress(b"hello world\n" * 100),
                     "gzip data that is neither a pprof nor an OTLP profile"),
        "binary": (LABELPROF.read_bytes()[:65536], "an ELF file, not a profile"),
    }
    for name, (content, what) in cases.items():
        f = tmp_path / name
        f.write_bytes(content)
        rc, out, err = convert_fails(f)
        assert rc == 1 and out == b"", f"{name}: exit {rc}, {len(out)} bytes out: {err}"
        assert f"labelprof: {f}: {what}" in err, f"{name}: {err}"
    # a forced format names the format's own complaint
    f = tmp_path / "empty"
    rc, _, err = convert_fails(f, "--input-format", "pprof")
    assert rc == 1 and "empty file" in err, err
    rc, _, err = convert_fails(path, "--input-format", "otlp")
    assert rc == 1 and "otlp: " in err and err.endswith("(the input is labelprof JSON)\n"), err


def test_process_context_labels_round_trip(tmp_path):
    """The OpenTelemetry process context's labels (source otel_process) are the OTLP
    resource's attributes: they come back from otlp and otlp-json, with their source."""
    from test_otel import otel_argv
    with started(otel_argv("lib", tmp_path / "otel.json")) as wl:
        rec = record(tmp_path, "-p", wl.pid, duration=2)
    check_exit(wl)

    def by_labels(doc):
        out = collections.Counter()
        for s in doc["samples"]:
            sources = s.get("label_sources") or {}
            process = frozenset((k, v) for k, v in sources.items() if v == "otel_process")
            out[(s["pid"], labels_of(s), process)] += s["count"]
        return out
    want = by_labels(rec.profile.doc)
    assert any(k[2] for k in want), "no label from the process context"
    for fmt in ("otlp", "otlp-json"):
        there = convert(rec.out, fmt, tmp_path / f"otel.{fmt}")
        got = by_labels(load_json(convert(there, "json", tmp_path / f"otel-{fmt}.json")))
        assert got == want, f"{fmt}: {differences(got, want)}"


def by_sources(doc):
    """{(pid, label set, label sources): samples}: which writer each label came from."""
    out = collections.Counter()
    for s in doc["samples"]:
        sources = frozenset((s.get("label_sources") or {}).items())
        out[(s.get("pid"), labels_of(s), sources)] += s["count"]
    return out


@pytest.fixture(scope="module")
def every_source(tmp_path_factory):
    """One recording of a process of each label source: custom labels (demo), the
    OpenTelemetry thread and process contexts (otel) and Go pprof labels (golabels)."""
    from test_golabels import golabels_argv
    from test_otel import otel_argv
    tmp = tmp_path_factory.mktemp("sources")
    with started([workload("demo"), "--duration", 60, "--threads", 1, "--quiet"]) as demo, \
            started(otel_argv("lib", tmp / "otel.json")) as otel, \
            started(golabels_argv("cgo0-plain", tmp / "go.json")) as go:
        rec = record(tmp, "-p", f"{demo.pid},{otel.pid},{go.pid}", duration=2)
        demo.proc.terminate()
    for wl in (demo, otel, go):
        check_exit(wl)
    want = by_sources(rec.profile.doc)
    seen = {src for (_, _, sources) in want for _, src in sources}
    assert seen == {"otel_thread", "otel_process", "go_pprof"}, seen
    assert any(not sources and labels for (_, labels, sources) in want), "no custom label"
    formats = {fmt: rec.out if fmt == "json" else convert(rec.out, fmt, tmp / f"every.{fmt}")
               for fmt in READABLE}
    return want, formats


@pytest.mark.parametrize("dst", READABLE)
@pytest.mark.parametrize("src", READABLE)
def test_label_sources_round_trip(request, every_source, tmp_path, src, dst):
    """original -> src -> dst (-> src): every label keeps its source."""
    want, formats = every_source
    there = convert(formats[src], dst, tmp_path / f"there.{dst}")
    got = by_sources(load_json(convert(there, "json", tmp_path / "there.json")))
    assert got == want, f"{src} -> {dst}: {differences(got, want)}"
    back = convert(there, src, tmp_path / f"back.{src}")
    got = by_sources(load_json(convert(back, "json", tmp_path / "back.json")))
    assert got == want, f"{src} -> {dst} -> {src}: {differences(got, want)}"
    measure(request, f"{src} -> {dst} -> {src}: {sum(want.values())} samples, "
                     f"{len(want)} (pid, labels, sources) keys kept")

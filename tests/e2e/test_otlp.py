"""OTLP profiles output (opentelemetry-proto v1.10/v1.11, profiles v1development):
the groundtruth workload (labels switching every 1-5 ms, one burn function per
label set) is recorded with --format otlp; the file must decode with protoc
(Debian's protobuf-compiler) against proto/, follow the field numbers of
docs/design.md section 5 (checked by a wire parser written from it, not from
proto/), follow the dictionary rules, carry the workload's pid as a resource
attribute and trace labels as Links, and agree with the pprof and labelprof
JSON conversions of the same recording (`labelprof convert`). The otlp-json
conversion must be the same request in OTLP's JSON mapping.

Strings in the file are escaped as user/format/output.h says for pprof (\\xHH for
backslash, control bytes and bytes that are not UTF-8)."""

import base64
import collections
import gzip
import json
import re
import shutil
import subprocess

import pytest

from conftest import LABELPROF, REPO, as_bytes, check_exit, load_json, started, workload

FREQ = 499
DURATION = 3
PERIOD = 1_000_000_000 // FREQ
PROTO = REPO / "proto"
SERVICE_PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
REQUEST = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"

# ---- a protobuf wire parser, with the field numbers of docs/design.md section 5 ----------------

# message: {field number: (name, type, repeated)}; a type is a scalar name or a message name.
OTLP = {
    "ExportProfilesServiceRequest": {1: ("resource_profiles", "ResourceProfiles", True),
                                     2: ("dictionary", "ProfilesDictionary", False)},
    "ProfilesDictionary": {1: ("mapping_table", "Mapping", True),
                           2: ("location_table", "Location", True),
                           3: ("function_table", "Function", True),
                           4: ("link_table", "Link", True),
                           5: ("string_table", "string", True),
                           6: ("attribute_table", "KeyValueAndUnit", True),
                           7: ("stack_table", "Stack", True)},
    "ResourceProfiles": {1: ("resource", "Resource", False),
                         2: ("scope_profiles", "ScopeProfiles", True),
                         3: ("schema_url", "string", False)},
    "Resource": {1: ("attributes", "KeyValue", True),
                 2: ("dropped_attributes_count", "uint32", False)},
    "KeyValue": {1: ("key", "string", False), 2: ("value", "AnyValue", False)},
    "AnyValue": {1: ("string_value", "string", False), 2: ("bool_value", "bool", False),
                 3: ("int_value", "int64", False), 4: ("double_value", "double", False),
                 7: ("bytes_value", "bytes", False)},
    "ScopeProfiles": {1: ("scope", "InstrumentationScope", False),
                      2: ("profiles", "Profile", True), 3: ("schema_url", "string", False)},
    "InstrumentationScope": {1: ("name", "string", False), 2: ("version", "string", False)},
    "Profile": {1: ("sample_type", "ValueType", False), 2: ("samples", "Sample", True),
                3: ("time_unix_nano", "fixed64", False), 4: ("duration_nano", "uint64", False),
                5: ("period_type", "ValueType", False), 6: ("period", "int64", False),
                7: ("profile_id", "bytes", False),
                8: ("dropped_attributes_count", "uint32", False),
                11: ("attribute_indices", "int32", True)},
    "ValueType": {1: ("type_strindex", "int32", False), 2: ("unit_strindex", "int32", False)},
    "Sample": {1: ("stack_index", "int32", False), 2: ("attribute_indices", "int32", True),
               3: ("link_index", "int32", False), 4: ("values", "int64", True),
               5: ("timestamps_unix_nano", "fixed64", True)},
    "Mapping": {1: ("memory_start", "uint64", False), 2: ("memory_limit", "uint64", False),
                3: ("file_offset", "uint64", False), 4: ("filename_strindex", "int32", False),
                5: ("attribute_indices", "int32", True)},
    "Location": {1: ("mapping_index", "int32", False), 2: ("address", "uint64", False),
                 3: ("lines", "Line", True), 4: ("attribute_indices", "int32", True)},
    "Line": {1: ("function_index", "int32", False), 2: ("line", "int64", False),
             3: ("column", "int64", False)},
    "Function": {1: ("name_strindex", "int32", False), 2: ("system_name_strindex", "int32", False),
                 3: ("filename_strindex", "int32", False), 4: ("start_line", "int64", False)},
    "Stack": {1: ("location_indices", "int32", True)},
    "Link": {1: ("trace_id", "bytes", False), 2: ("span_id", "bytes", False)},
    "KeyValueAndUnit": {1: ("key_strindex", "int32", False), 2: ("value", "AnyValue", False),
                        3: ("unit_strindex", "int32", False)},
}

PPROF = {
    "Profile": {1: ("sample_type", "ValueType", True), 2: ("sample", "Sample", True),
                3: ("mapping", "Mapping", True), 4: ("location", "Location", True),
                5: ("function", "Function", True), 6: ("string_table", "string", True),
                9: ("time_nanos", "int64", False), 10: ("duration_nanos", "int64", False),
                11: ("period_type", "ValueType", False), 12: ("period", "int64", False),
                13: ("comment", "int64", True)},
    "ValueType": {1: ("type", "int64", False), 2: ("unit", "int64", False)},
    "Sample": {1: ("location_id", "uint64", True), 2: ("value", "int64", True),
               3: ("label", "Label", True)},
    "Label": {1: ("key", "int64", False), 2: ("str", "int64", False), 3: ("num", "int64", False),
              4: ("num_unit", "int64", False)},
    "Mapping": {1: ("id", "uint64", False), 2: ("memory_start", "uint64", False),
                3: ("memory_limit", "uint64", False), 4: ("file_offset", "uint64", False),
                5: ("filename", "int64", False), 6: ("build_id", "int64", False)},
    "Location": {1: ("id", "uint64", False), 2: ("mapping_id", "uint64", False),
                 3: ("address", "uint64", False), 4: ("line", "Line", True)},
    "Line": {1: ("function_id", "uint64", False), 2: ("line", "int64", False)},
    "Function": {1: ("id", "uint64", False), 2: ("name", "int64", False),
                 3: ("system_name", "int64", False), 4: ("filename", "int64", False),
                 5: ("start_line", "int64", False)},
}

VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "bool"}


def _varint(buf, i):
    value = shift = 0
    while True:
        assert i < len(buf), "truncated varint"
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i
        assert shift < 70, "varint too long"


def _scalar(kind, value):
    if kind in ("int32", "int64") and value >= 1 << 63:
        return value - (1 << 64)
    if kind == "bool":
        return bool(value)
    return value


def parse(buf, schema, name, strict=True):
    """Decodes message name: {field name: value}; repeated fields are lists, repeated
    messages keep their encoding in "__raw__". Unknown fields fail when strict."""
    fields = schema[name]
    out = {}
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            raw, i = _varint(buf, i)
        elif wire == 1:
            raw, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            raw, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        elif wire == 2:
            n, i = _varint(buf, i)
            raw, i = bytes(buf[i:i + n]), i + n
        else:
            raise AssertionError(f"{name}: wire type {wire} of field {num}")
        assert i <= len(buf), f"{name}: field {num} runs past the end"
        if num not in fields:
            assert not strict, f"{name}: field {num} is not in docs/design.md section 5"
            continue
        fname, kind, repeated = fields[num]
        if kind in schema:
            assert wire == 2, f"{name}.{fname}: wire type {wire}"
            value = parse(raw, schema, kind, strict)
            value["__raw__"] = raw
            values = [value]
        elif kind in ("string", "bytes"):
            assert wire == 2, f"{name}.{fname}: wire type {wire}"
            values = [raw.decode("utf-8") if kind == "string" else raw]
        elif wire == 2:  # packed
            assert repeated, f"{name}.{fname}: packed but not repeated"
            values, j = [], 0
            while j < len(raw):
                if kind == "fixed64":
                    values.append(int.from_bytes(raw[j:j + 8], "little"))
                    j += 8
                else:
                    v, j = _varint(raw, j)
                    values.append(_scalar(kind, v))
        else:
            want = 1 if kind in ("fixed64", "double") else 0
            assert wire == want, f"{name}.{fname}: wire type {wire}"
            values = [_scalar(kind, raw)]
        if repeated:
            out.setdefault(fname, []).extend(values)
        else:
            out[fname] = values[-1]
    return out


# ---- running labelprof and protoc ------------------------------------------------------------

def run(cmd, stdin=None, timeout=180):
    proc = subprocess.run([str(c) for c in cmd], input=stdin, capture_output=True,
                          timeout=timeout)
    assert proc.returncode == 0, (f"`{' '.join(map(str, cmd))}` exited {proc.returncode}: "
                                  f"{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def convert(src, fmt, dst):
    run([LABELPROF, "convert", src, "--format", fmt, "-o", dst])
    return dst


def pb_escape(b):
    """Bytes as labelprof writes them into protobuf strings (user/format/output.h)."""
    out = []
    for ch in b.decode("utf-8", "surrogateescape"):
        c = ord(ch)
        if 0xdc80 <= c <= 0xdcff:  # a byte that is not part of valid UTF-8
            out.append(f"\\x{c - 0xdc00:02x}")
        elif ch == "\\" or c < 0x20 or c == 0x7f:
            out.append(f"\\x{c:02x}")
        else:
            out.append(ch)
    return "".join(out)


class Request:
    """A decoded ExportProfilesServiceRequest, with lookups into its dictionary."""

    def __init__(self, data):
        self.msg = parse(data, OTLP, "ExportProfilesServiceRequest")
        self.d = self.msg["dictionary"]
        self.strings = self.d["string_table"]

    def table(self, name):
        return self.d.get(name, [])

    def attr(self, i):
        a = self.table("attribute_table")[i]
        v = a.get("value", {})
        value = v.get("string_value", v.get("int_value"))
        return self.strings[a.get("key_strindex", 0)], value

    def profiles(self):
        for rp in self.msg.get("resource_profiles", []):
            res = {kv["key"]: kv["value"].get("string_value", kv["value"].get("int_value"))
                   for kv in rp.get("resource", {}).get("attributes", [])}
            for sp in rp.get("scope_profiles", []):
                for p in sp.get("profiles", []):
                    yield res, p

    def functions(self, stack_index):
        """The function names of a stack, leaf first, inlined functions first."""
        names = []
        for li in self.table("stack_table")[stack_index].get("location_indices", []):
            for line in self.table("location_table")[li].get("lines", []):
                f = self.table("function_table")[line.get("function_index", 0)]
                names.append(self.strings[f.get("name_strindex", 0)])
        return names

    def leaf_function(self, stack_index):
        """The innermost function at a stack's leaf, or None."""
        locs = self.table("stack_table")[stack_index].get("location_indices", [])
        lines = self.table("location_table")[locs[0]].get("lines", []) if locs else []
        if not lines:
            return None
        f = self.table("function_table")[lines[0].get("function_index", 0)]
        return self.strings[f.get("name_strindex", 0)]

    def labels(self, s):
        """A sample's labels: its string attributes but thread.*, and its Link as trace labels."""
        labels = {}
        for ai in s.get("attribute_indices", []):
            k, v = self.attr(ai)
            if k not in ("thread.id", "thread.name"):
                labels[k] = v
        link = self.table("link_table")[s.get("link_index", 0)]
        if link.get("trace_id") and "span-id" not in labels:
            labels["trace_id"] = link["trace_id"].hex()
            labels["span_id"] = link["span_id"].hex()
        return frozenset(labels.items())


# ---- the recording ---------------------------------------------------------------------------

class Recording:
    def __init__(self, tmp, report, otlp):
        self.tmp = tmp
        self.report = report
        self.pid = report["pid"]
        self.path = otlp
        self.req = Request(otlp.read_bytes())
        # Each burn function's label set, as the file's strings.
        self.sets = {s["function"]: frozenset((pb_escape(as_bytes(k)), pb_escape(as_bytes(v)))
                                              for k, v in s["labels"].items())
                     for s in report["sets"]}
        self.sets[report["unlabelled"]["function"]] = frozenset()


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    """groundtruth (labels in a library) recorded as OTLP with the thread attributes."""
    tmp = tmp_path_factory.mktemp("otlp")
    report_path, out = tmp / "groundtruth.json", tmp / "cpu.otlp"
    argv = [workload("groundtruth-v1-lib"), "--threads", 2, "--interval", "1000,5000",
            "--output", report_path, "--wait-stdin"]
    with started(argv) as wl:
        run([LABELPROF, "record", "-p", wl.pid, "-d", DURATION, "-F", FREQ, "--format", "otlp",
             "-o", out, "--pprof-labels", "tid,thread_name"])
    check_exit(wl)
    return Recording(tmp, load_json(report_path), out)


def test_protoc_decodes(rec):
    assert shutil.which("protoc"), "protoc is not installed: make deps"
    raw = run(["protoc", "--decode_raw"], stdin=rec.path.read_bytes()).decode()
    assert re.search(r"^1 \{", raw, re.M) and re.search(r"^2 \{", raw, re.M), raw[:500]
    text = run(["protoc", f"--decode={REQUEST}", "-I", PROTO, PROTO / SERVICE_PROTO],
               stdin=rec.path.read_bytes()).decode()
    assert text.startswith("resource_profiles {"), text[:200]
    for field in ("dictionary {", "string_table: \"\"", "stack_table {", "link_table {",
                  "time_unix_nano:", "sample_type {", "period:", "profile_id:"):
        assert field in text, f"no {field} in protoc's decoding"
    # every field has a name in proto/: protoc shows unknown fields by number
    assert not re.search(r"^\s*\d+:", text, re.M), re.search(r"^\s*\d+:.*$", text, re.M)[0]


def test_dictionary_rules(rec):
    req = rec.req
    d = req.d
    for name in ("mapping_table", "location_table", "function_table", "link_table",
                 "attribute_table", "stack_table"):
        table = d.get(name)
        assert table, f"{name} is missing: every table holds at least its zero entry"
        assert table[0]["__raw__"] == b"", f"{name}[0] is not the zero value"
        raws = [e["__raw__"] for e in table]
        assert len(set(raws)) == len(raws), f"{name} has duplicate entries"
    assert req.strings[0] == ""
    assert len(set(req.strings)) == len(req.strings), "string_table has duplicates"

    def in_range(i, name):
        n = len(req.strings) if name == "string_table" else len(d[name])
        assert 0 <= i < n, f"index {i} outside {name} ({n})"

    for m in d["mapping_table"]:
        in_range(m.get("filename_strindex", 0), "string_table")
        for a in m.get("attribute_indices", []):
            in_range(a, "attribute_table")
    for loc in d["location_table"]:
        in_range(loc.get("mapping_index", 0), "mapping_table")
        for line in loc.get("lines", []):
            in_range(line.get("function_index", 0), "function_table")
    for st in d["stack_table"]:
        for li in st.get("location_indices", []):
            in_range(li, "location_table")
    for a in d["attribute_table"]:
        in_range(a.get("key_strindex", 0), "string_table")
    for link in d["link_table"][1:]:
        assert len(link["trace_id"]) == 16 and len(link["span_id"]) == 8
    for _res, p in req.profiles():
        seen = set()
        for s in p.get("samples", []):
            in_range(s.get("stack_index", 0), "stack_table")
            in_range(s.get("link_index", 0), "link_table")
            keys = [req.attr(a)[0] for a in s.get("attribute_indices", [])]
            assert len(keys) == len(set(keys)), f"attribute keys repeat in a sample: {keys}"
            ident = (s.get("stack_index", 0), tuple(sorted(s.get("attribute_indices", []))),
                     s.get("link_index", 0))
            assert ident not in seen, f"two samples with the identity {ident}: not merged"
            seen.add(ident)
        assert len(p["profile_id"]) == 16 and any(p["profile_id"])


def test_resource_and_profile(rec):
    req = rec.req
    resources = [res for res, _p in req.profiles()]
    assert [r["process.pid"] for r in resources] == [rec.pid], resources
    res = resources[0]
    # what the recording knows of the process beyond its pid
    if "process.executable.path" in res:
        assert res["process.executable.path"].endswith("/groundtruth-v1-lib")
        assert res["process.executable.name"] == "groundtruth-v1-lib"
    assert res.get("host.name")
    scope = req.msg["resource_profiles"][0]["scope_profiles"][0]["scope"]
    assert scope["name"] == "labelprof"
    _res, p = next(req.profiles())
    assert [req.strings[p["sample_type"][k]] for k in ("type_strindex", "unit_strindex")] == \
        ["cpu", "nanoseconds"]
    assert [req.strings[p["period_type"][k]] for k in ("type_strindex", "unit_strindex")] == \
        ["cpu", "nanoseconds"]
    assert p["period"] == PERIOD
    assert p["time_unix_nano"] > 1_600_000_000 * 10**9
    assert abs(p["duration_nano"] - DURATION * 10**9) < 10**9
    for s in p["samples"]:
        assert len(s["values"]) == 1 and s["values"][0] > 0 and s["values"][0] % PERIOD == 0
        keys = {req.attr(a)[0] for a in s.get("attribute_indices", [])}
        assert {"thread.id", "thread.name"} <= keys, keys
    # kernel frames (if any) are in the kernel's mappings
    for loc in req.table("location_table")[1:]:
        types = [req.attr(a) for a in loc.get("attribute_indices", [])]
        assert ("profile.frame.type", "kernel") in types or \
            ("profile.frame.type", "native") in types, types
        if ("profile.frame.type", "kernel") in types:
            m = req.table("mapping_table")[loc["mapping_index"]]
            assert req.strings[m["filename_strindex"]].startswith("[")


def burn_totals(req, sets):
    """{burn function: {label set: value}} over the file's samples."""
    totals = collections.defaultdict(collections.Counter)
    for _res, p in req.profiles():
        for s in p["samples"]:
            fns = set(req.functions(s.get("stack_index", 0))) & set(sets)
            if len(fns) == 1:
                totals[fns.pop()][req.labels(s)] += s["values"][0]
    return totals


def test_labels_and_links(rec):
    """Each burn function's samples carry its set (W3C trace labels as a Link)."""
    req = rec.req
    totals = burn_totals(req, rec.sets)
    for fn, want in rec.sets.items():
        got = totals.get(fn)
        assert got, f"no sample in {fn}"
        right = got[want]
        assert right >= 0.99 * sum(got.values()), f"{fn}: {got.most_common(3)} vs {want}"
    trace = dict(rec.sets["burn_set_6"])
    linked = 0
    for _res, p in req.profiles():
        for s in p["samples"]:
            if "burn_set_6" not in req.functions(s.get("stack_index", 0)):
                continue
            keys = {req.attr(a)[0] for a in s.get("attribute_indices", [])}
            assert not keys & {"trace_id", "span_id"}, "trace labels repeated as attributes"
            link = req.table("link_table")[s.get("link_index", 0)]
            if link.get("trace_id", b"").hex() == trace["trace_id"] and \
                    link.get("span_id", b"").hex() == trace["span_id"]:
                linked += s["values"][0]
    assert linked > 0, "no Link for the trace labels of burn_set_6"


def pprof_totals(path):
    """From a pprof file: {label set: samples} and {function: samples} (leaf, self)."""
    prof = parse(gzip.decompress(path.read_bytes()), PPROF, "Profile", strict=False)
    strings = prof["string_table"]
    types = [strings[t["type"]] for t in prof["sample_type"]]
    count_at = types.index("samples")
    functions = {f["id"]: strings[f.get("name", 0)] for f in prof.get("function", [])}
    locations = {loc["id"]: loc for loc in prof.get("location", [])}
    by_set, by_fn = collections.Counter(), collections.Counter()
    for s in prof["sample"]:
        n = s["value"][count_at]
        # pid and comm (the process, by default): OTLP has them in the resource
        labels = frozenset((strings[lb["key"]], strings[lb.get("str", 0)])
                           for lb in s.get("label", [])
                           if "num" not in lb and strings[lb["key"]] != "comm")
        by_set[labels] += n
        leaf = locations[s["location_id"][0]] if s.get("location_id") else {}
        lines = leaf.get("line", [])
        by_fn[functions.get(lines[0].get("function_id")) if lines else None] += n
    return by_set, by_fn


def otlp_totals(req, period):
    by_set, by_fn = collections.Counter(), collections.Counter()
    for _res, p in req.profiles():
        for s in p["samples"]:
            n = s["values"][0] // period
            by_set[req.labels(s)] += n
            by_fn[req.leaf_function(s.get("stack_index", 0))] += n
    return by_set, by_fn


def test_pprof_agrees(rec):
    """pprof and OTLP of one recording: the same totals per label set and per function."""
    pprof = convert(rec.path, "pprof", rec.tmp / "cpu.pb.gz")
    p_sets, p_fns = pprof_totals(pprof)
    o_sets, o_fns = otlp_totals(rec.req, PERIOD)
    assert sum(o_sets.values()) > 0
    assert p_sets == o_sets
    assert p_fns == o_fns


def test_json_agrees(rec):
    """labelprof's JSON of the file: the same samples per label set (bytes escaped alike)."""
    doc = load_json(convert(rec.path, "json", rec.tmp / "cpu.json"))
    j_sets = collections.Counter()
    for s in doc["samples"]:
        assert s["pid"] == rec.pid
        j_sets[frozenset((pb_escape(as_bytes(k)), pb_escape(as_bytes(v)))
                         for k, v in s["labels"].items())] += s["count"]
    assert j_sets == otlp_totals(rec.req, PERIOD)[0]


def expected_json(msg, schema, name):
    """A decoded message in OTLP's JSON mapping: lowerCamelCase, 64-bit integers as
    strings, trace/span/profile ids in hex, other bytes in base64."""
    out = {}
    fields = {f[0]: f for f in schema[name].values()}
    for key, value in msg.items():
        if key == "__raw__":
            continue
        _, kind, repeated = fields[key]
        camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)

        def one(v):
            if kind in schema:
                return expected_json(v, schema, kind)
            if kind in ("int64", "uint64", "fixed64"):
                return str(v)
            if kind == "bytes":
                return v.hex() if key in ("trace_id", "span_id", "profile_id") else \
                    base64.b64encode(v).decode()
            return v
        out[camel] = [one(v) for v in value] if repeated else one(value)
    return out


def check_camel_case(obj, path="$"):
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert re.fullmatch(r"[a-z][a-zA-Z0-9]*", k), f"{path}: key {k!r} is not lowerCamelCase"
            check_camel_case(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            check_camel_case(v, f"{path}[{i}]")


def test_otlp_json(rec):
    """otlp-json is the same request as otlp, in OTLP's JSON mapping."""
    again = convert(rec.path, "otlp", rec.tmp / "again.otlp")
    doc = json.loads(convert(rec.path, "otlp-json", rec.tmp / "cpu.otlp.json").read_text())
    check_camel_case(doc)
    p = doc["resourceProfiles"][0]["scopeProfiles"][0]["profiles"][0]
    assert isinstance(p["timeUnixNano"], str) and isinstance(p["period"], str)
    assert re.fullmatch(r"[0-9a-f]{32}", p["profileId"])
    assert all(isinstance(v, str) for s in p["samples"] for v in s["values"])
    for link in doc["dictionary"]["linkTable"][1:]:
        assert re.fullmatch(r"[0-9a-f]{32}", link["traceId"])
        assert re.fullmatch(r"[0-9a-f]{16}", link["spanId"])
    msg = Request(again.read_bytes()).msg
    assert doc == expected_json(msg, OTLP, "ExportProfilesServiceRequest")


def test_record_otlp_json(tmp_path):
    """--format otlp-json straight from a recording of the demo workload."""
    out = tmp_path / "demo.json"
    with started([workload("demo"), "--duration", 60, "--threads", 2, "--quiet"]) as wl:
        run([LABELPROF, "record", "-p", wl.pid, "-d", 2, "--format", "otlp-json", "-o", out])
        wl.proc.terminate()
    doc = json.loads(out.read_text())
    check_camel_case(doc)
    rp = doc["resourceProfiles"]
    pids = [kv["value"]["intValue"] for r in rp for kv in r["resource"]["attributes"]
            if kv["key"] == "process.pid"]
    assert pids == [str(wl.pid)]
    strings = doc["dictionary"]["stringTable"]
    assert {"hash_password", "search_index", "compute_tax"} <= set(strings)
    keys = {strings[a.get("keyStrindex", 0)] for a in doc["dictionary"]["attributeTable"]}
    assert {"tenant", "endpoint", "request_id"} <= keys

"""The deployment files: the systemd unit, `make install`, the man page, the
container image and the Kubernetes manifests, and the capability set they all
grant (deploy/capabilities.txt).

That set must be enough, and each capability in it needed: labelprof runs here
as a non-root uid holding exactly those capabilities (ambient, inheritable and
bounding sets), and once without each of them. The agent runs in an emulation
of the unit's sandbox (strace checks its system calls, socket families,
mappings and writes against the unit's settings), talking sd_notify to the
test as it would to systemd."""

import contextlib
import http.server
import json
import os
import pathlib
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request

import pytest
import yaml

from conftest import (ATTRIBUTION_MIN, LABELPROF, OUTPUT, REPO, Profile, label_set, labels_of,
                      load_json, measure, started, which_function, workload)

DEPLOY = REPO / "deploy"
UNIT = DEPLOY / "labelprof.service"
CAPS_FILE = DEPLOY / "capabilities.txt"
DAEMONSET = DEPLOY / "kubernetes" / "daemonset.yaml"
YAMLLINT_CONFIG = DEPLOY / "kubernetes" / ".yamllint.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
AGENT_CONF_EXAMPLE = DEPLOY / "agent.conf.example"
MAN_PAGE = OUTPUT / "labelprof.8"
NOBODY = 65534
FREQ = 499


# ---- the files' contents --------------------------------------------------------------------

def capabilities():
    """deploy/capabilities.txt: the capability names, in order."""
    caps = [ln.strip() for ln in CAPS_FILE.read_text().splitlines()
            if ln.strip() and not ln.startswith("#")]
    assert caps and all(c.startswith("CAP_") and c[4:] in CAP_BITS for c in caps), caps
    assert len(set(caps)) == len(caps), caps
    return caps


def unit_settings(path=UNIT):
    """A unit file as {section: [(key, value), ...]} in file order."""
    sections, cur = {}, None
    for ln in path.read_text().splitlines():
        ln = ln.strip()
        if not ln or ln.startswith(("#", ";")):
            continue
        m = re.fullmatch(r"\[(\w+)\]", ln)
        if m:
            cur = sections.setdefault(m.group(1), [])
            continue
        key, sep, value = ln.partition("=")
        assert sep and cur is not None, f"{path}: not a setting: {ln!r}"
        cur.append((key.strip(), value.strip()))
    return sections


def service(key, path=UNIT):
    """Every value of [Service] KEY, in order."""
    return [v for k, v in unit_settings(path)["Service"] if k == key]


def one(key, path=UNIT):
    values = service(key, path)
    assert len(values) == 1, f"{key}= should be set once in {path}: {values}"
    return values[0]


def daemonset_docs():
    with open(DAEMONSET) as f:
        return list(yaml.safe_load_all(f))


def doc_of(kind):
    docs = [d for d in daemonset_docs() if d["kind"] == kind]
    assert len(docs) == 1, f"one {kind} in {DAEMONSET}"
    return docs[0]


def agent_container():
    spec = doc_of("DaemonSet")["spec"]["template"]["spec"]
    assert len(spec["containers"]) == 1
    return spec, spec["containers"][0]


def ini(text):
    """An agent.conf as {key: value}."""
    out = {}
    for ln in text.splitlines():
        if not ln.strip() or ln.lstrip().startswith(("#", ";")):
            continue
        key, sep, value = ln.partition("=")
        assert sep, ln
        out[key.strip()] = value.split(" ;")[0].strip()
    return out


# linux/capability.h
CAP_BITS = {name: bit for bit, name in enumerate(
    "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP "
    "LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER "
    "SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE "
    "SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP "
    "MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF "
    "CHECKPOINT_RESTORE".split())}


def require_capabilities(caps):
    """Fails when this system (a container?) cannot grant them."""
    with open("/proc/self/status") as f:
        bnd = int(next(ln for ln in f if ln.startswith("CapBnd:")).split()[1], 16)
    missing = [c for c in caps if not bnd >> CAP_BITS[c[len("CAP_"):]] & 1]
    assert not missing, f"{sorted(missing)} are not in this system's bounding set"


def as_nobody(caps, argv):
    """argv as uid/gid 65534 with exactly caps as ambient, inheritable and bounding sets."""
    names = ",".join(["-all"] + ["+" + c[4:].lower() for c in caps])
    bounding = names if caps else "-all"
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            f"--inh-caps={names}", f"--ambient-caps={names}", f"--bounding-set={bounding}",
            *map(str, argv)]


def shared_tmpdir(prefix):
    """A directory uid 65534 can write, outside pytest's root-only tree."""
    path = tempfile.mkdtemp(prefix=prefix)
    os.chmod(path, 0o777)
    return path


def test_one_capability_list_everywhere():
    """The unit, the DaemonSet and the man page grant exactly deploy/capabilities.txt."""
    caps = capabilities()
    assert one("CapabilityBoundingSet").split() == caps
    assert one("AmbientCapabilities").split() == caps
    _, c = agent_container()
    added = c["securityContext"]["capabilities"]["add"]
    assert added == [x[len("CAP_"):] for x in caps]
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
    page = MAN_PAGE.read_text()
    privileges = page.split(".SH PRIVILEGES", 1)[1].split(".SH ", 1)[0]
    assert re.findall(r"\\fB(CAP_[A-Z_]+)\\fR", privileges) == caps


# ---- the systemd unit -----------------------------------------------------------------------

def test_unit_settings():
    """The service contract the agent implements, and the hardening the
    capability and kallsyms findings allow (deploy/labelprof.service says why)."""
    assert one("Type") == "notify"
    assert one("NotifyAccess") == "main"
    assert one("ExecReload") == "/bin/kill -HUP $MAINPID"
    assert one("Restart") == "on-failure"
    argv = shlex.split(one("ExecStart"))
    assert argv == ["/usr/local/bin/labelprof", "agent", "--config", "/etc/labelprof/agent.conf"]
    expected = {
        "DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
        "StateDirectory": "labelprof", "PrivateTmp": "yes", "ProtectHome": "read-only",
        "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
        "LimitMEMLOCK": "infinity", "SystemCallArchitectures": "native",
        # /proc/kallsyms inaccessible, CAP_SYSLOG dropped: no kernel symbols
        "ProtectKernelTunables": "no", "ProtectKernelLogs": "no",
    }
    for key, value in expected.items():
        assert one(key) == value, key
    for key in ("MemoryMax", "CPUQuota", "RestrictAddressFamilies"):
        assert one(key)
    # capabilities in a user namespace, or a /proc without kallsyms, break sampling;
    # the network is the agent's output
    for key in ("PrivateUsers", "ProcSubset", "ProtectProc", "PrivateNetwork", "IPAddressDeny",
                "User"):
        assert not service(key), key
    # the state directory is where the agent's configuration writes
    conf = ini(AGENT_CONF_EXAMPLE.read_text())
    for key in ("output_dir", "spool_dir"):
        if conf.get(key):
            assert conf[key].startswith("/var/lib/labelprof/"), (key, conf[key])


def needed_libraries(binary=LABELPROF):
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", out)


def sanitized(binary=LABELPROF):
    """Whether this is the SANITIZE=1 build (make must be told, or it relinks without)."""
    return any(lib.startswith(("libasan", "libubsan")) for lib in needed_libraries(binary))


# What a plain `make` builds into.
PLAIN_OUTPUT = REPO / ".output"


def make(*args, check=True, plain=False):
    """make ARGS for the build under test, or with plain for the build without SANITIZE=1."""
    # a make of its own, not a sub-make of `make test` (no jobserver to share); make
    # exports its command line's variables, SANITIZE=1 too: the flags below decide
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "SANITIZE")}
    output, flags = (PLAIN_OUTPUT, []) if plain else (OUTPUT, ["SANITIZE=1"] if sanitized() else [])
    proc = subprocess.run(["make", "--no-print-directory", f"OUTPUT={output}", *flags,
                           *map(str, args)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    if check:
        assert proc.returncode == 0, f"make {' '.join(map(str, args))}: {proc.stderr}"
    return proc


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


INSTALLED = ["etc/labelprof/agent.conf", "usr/local/bin/labelprof",
             "usr/local/lib/systemd/system/labelprof.service",
             "usr/local/share/man/man8/labelprof.8"]


def test_make_install_and_uninstall(tmp_path):
    dest = tmp_path / "root"
    make("install", f"DESTDIR={dest}")
    assert files_under(dest) == INSTALLED
    modes = {f: os.stat(dest / f).st_mode & 0o7777 for f in INSTALLED}
    assert modes == {INSTALLED[0]: 0o644, INSTALLED[1]: 0o755, INSTALLED[2]: 0o644,
                     INSTALLED[3]: 0o644}
    assert (dest / INSTALLED[0]).read_bytes() == AGENT_CONF_EXAMPLE.read_bytes()
    assert (dest / INSTALLED[1]).read_bytes() == LABELPROF.read_bytes()
    assert (dest / INSTALLED[2]).read_text() == UNIT.read_text()
    assert (dest / INSTALLED[3]).read_bytes() == MAN_PAGE.read_bytes()

    # an edited configuration survives install and uninstall
    conf = dest / INSTALLED[0]
    conf.write_text(conf.read_text() + "\n# edited\n")
    edited = conf.read_text()
    assert "KEEP" in make("install", f"DESTDIR={dest}").stdout
    assert conf.read_text() == edited
    make("uninstall", f"DESTDIR={dest}")
    assert files_under(dest) == [INSTALLED[0]]
    conf.unlink()

    # a pristine one goes; another prefix moves ExecStart= and the configuration
    make("install", f"DESTDIR={dest}", "PREFIX=/usr", "SYSCONFDIR=/opt/etc")
    unit = dest / "usr/lib/systemd/system/labelprof.service"
    assert shlex.split(one("ExecStart", unit)) == [
        "/usr/bin/labelprof", "agent", "--config", "/opt/etc/labelprof/agent.conf"]
    assert (dest / "usr/bin/labelprof").is_file()
    assert (dest / "usr/share/man/man8/labelprof.8").is_file()
    make("uninstall", f"DESTDIR={dest}", "PREFIX=/usr", "SYSCONFDIR=/opt/etc")
    assert files_under(dest) == []


@pytest.fixture(scope="module")
def unit_root(tmp_path_factory):
    """`make install` into a root that systemd-analyze --root= can check: the
    unit, the binary it starts, /bin/kill, and the system's own units."""
    root = tmp_path_factory.mktemp("unit-root")
    make("install", f"DESTDIR={root}")
    units = system_unit_dir("/usr/lib/systemd/system", "/lib/systemd/system")
    shutil.copytree(units, root / "usr/lib/systemd/system", symlinks=True, dirs_exist_ok=True)
    (root / "bin").mkdir(exist_ok=True)
    shutil.copy2("/bin/kill", root / "bin/kill")
    return root


def system_unit_dir(*paths):
    for p in paths:
        if os.path.isdir(p) and os.path.exists(os.path.join(p, "sysinit.target")):
            return p
    pytest.fail(f"no systemd unit directory among {paths}")


def test_systemd_analyze_verify(unit_root):
    """No warning at all: unknown keys, bad values and a missing ExecStart=
    binary are only warnings for systemd-analyze. (--man=no: man(1) cannot
    look inside --root; the man page has its own tests.)"""
    proc = subprocess.run(["systemd-analyze", "verify", "--man=no", f"--root={unit_root}",
                           "labelprof.service"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and not proc.stdout.strip() and not proc.stderr.strip(), (
        proc.returncode, proc.stdout, proc.stderr)


def test_systemd_analyze_security(request, unit_root):
    proc = subprocess.run(["systemd-analyze", "security", "--offline=yes", f"--root={unit_root}",
                           "--no-pager", "labelprof.service"], capture_output=True, text=True,
                          timeout=60)
    m = re.search(r"Overall exposure level for labelprof\.service: ([\d.]+) (\w+)", proc.stdout)
    assert m, proc.stdout + proc.stderr
    measure(request, f"systemd-analyze security: exposure {m.group(1)} {m.group(2)}")
    # 10 is an unhardened service; what remains is what sampling needs
    assert float(m.group(1)) <= 3.5, proc.stdout


# ---- the man page ---------------------------------------------------------------------------

def help_text(*args):
    return subprocess.run([str(LABELPROF), *args, "--help"], capture_output=True, text=True,
                          check=True, env={"PATH": os.environ["PATH"], "LC_ALL": "C"}).stdout


def listed_commands():
    text = help_text().split("Commands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  (\S+) ", text, re.M)]


def test_man_page_renders_without_warnings():
    proc = subprocess.run(["groff", "-man", "-ww", "-z", str(MAN_PAGE)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    text = subprocess.run(["groff", "-man", "-Tutf8", str(MAN_PAGE)], capture_output=True,
                          text=True, check=True).stdout
    text = re.sub(r".\x08|\x1b\[[0-9;]*m", "", text)  # bold and underline
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "PRIVILEGES", "FILES",
                    "ENVIRONMENT", "EXAMPLES", "SEE ALSO"):
        assert re.search(rf"^{section}$", text, re.M), section


def test_man_page_has_every_command_and_option():
    """Made from --help: every command `labelprof --help` lists, and every
    option of each `labelprof COMMAND --help`."""
    page = MAN_PAGE.read_text()
    cmds = listed_commands()
    assert {"record", "agent"} <= set(cmds), cmds
    assert re.findall(r"^\.SS (\S+)$", page, re.M) == cmds
    for cmd in cmds:
        section = page.split(f".SS {cmd}\n", 1)[1].split("\n.SS ", 1)[0].split("\n.SH ", 1)[0]
        opts = set(re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", help_text(cmd), re.M))
        opts -= {"--help", "--usage", "--version"}  # argp's own, hidden by mkman.py
        for opt in opts:
            assert f"\\fB{opt.replace('-', chr(92) + '-')}\\fR" in section, (cmd, opt)


def test_man_page_is_current(tmp_path):
    """What `make` built is what the sources give now."""
    out = tmp_path / "labelprof.8"
    env = dict(os.environ, SOURCE_DATE_EPOCH="0")
    subprocess.run(["python3", REPO / "docs/mkman.py", LABELPROF, REPO / "docs/labelprof.8.in",
                    CAPS_FILE, out], check=True, env=env, timeout=60)
    strip_date = re.compile(r'^(\.TH \S+ \S+) "[^"]*"', re.M)
    assert strip_date.sub(r"\1", out.read_text()) == strip_date.sub(r"\1", MAN_PAGE.read_text())


# ---- Kubernetes -----------------------------------------------------------------------------

def test_yamllint():
    proc = subprocess.run(["yamllint", "--strict", "-c", YAMLLINT_CONFIG, DEPLOY / "kubernetes"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_kubernetes_fields_exist():
    """Every field is one the Kubernetes API knows (the python client's models
    drop unknown ones): catches misspelt keys a cluster would reject."""
    from kubernetes import client

    class Response:
        def __init__(self, obj):
            self.data = json.dumps(obj)

    def unknown(orig, back, path=""):
        if isinstance(orig, dict):
            return [u for k, v in orig.items()
                    for u in ([f"{path}.{k}"] if not isinstance(back, dict) or k not in back
                              else unknown(v, back[k], f"{path}.{k}"))]
        if isinstance(orig, list):
            return [u for i, (a, b) in enumerate(zip(orig, back))
                    for u in unknown(a, b, f"{path}[{i}]")]
        return []

    api = client.ApiClient()
    # newer than the Debian package's models (Kubernetes 1.30)
    newer = {".spec.template.spec.containers[0].securityContext.appArmorProfile"}
    for doc in daemonset_docs():
        model = {"Namespace": "V1Namespace", "ServiceAccount": "V1ServiceAccount",
                 "ConfigMap": "V1ConfigMap", "DaemonSet": "V1DaemonSet"}[doc["kind"]]
        back = api.sanitize_for_serialization(api.deserialize(Response(doc), model))
        assert set(unknown(doc, back)) <= newer, (doc["kind"], unknown(doc, back))


def test_daemonset_invariants():
    spec, c = agent_container()
    sc = c["securityContext"]
    assert spec["hostPID"] is True
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc.get("runAsUser") == 0, "no ambient capabilities in Kubernetes: uid 0 holds them"
    assert not spec.get("hostNetwork") and not spec.get("hostIPC")
    assert {"operator": "Exists"} in spec["tolerations"]
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]

    # the configuration: mounted where the arguments say, accepted by the agent elsewhere
    cm = doc_of("ConfigMap")
    conf = ini(cm["data"]["agent.conf"])
    args = c.get("args", [])
    config_path = args[args.index("--config") + 1]
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes[mounts[os.path.dirname(config_path)]["name"]]["configMap"]["name"] == \
        cm["metadata"]["name"]
    assert os.path.basename(config_path) in cm["data"]

    # metrics: the port the agent listens on is the probes' and Prometheus's
    port = int(conf["metrics_listen"].rsplit(":", 1)[1])
    assert conf["metrics_listen"].startswith(("0.0.0.0:", ":", "[::]:"))
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports["metrics"] == port
    # live while sampling runs; ready while export keeps up too (docs/agent.md)
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/healthz")):
        assert c[probe]["httpGet"]["path"] == path
        assert c[probe]["httpGet"]["port"] in ("metrics", port)
    ann = doc_of("DaemonSet")["spec"]["template"]["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and int(ann["prometheus.io/port"]) == port

    # host paths: read-only, but the state directory the spool lives in
    for path, m in mounts.items():
        vol = volumes[m["name"]]
        if "hostPath" in vol:
            writable = conf.get("spool_dir", "").startswith(path + "/")
            assert bool(m.get("readOnly")) != writable, path
    # the BPF programs attach through BTF: nothing of tracefs or debugfs is needed
    assert not any(p.startswith(("/sys/kernel/tracing", "/sys/kernel/debug")) for p in mounts)
    assert "/sys/fs/cgroup" in mounts
    assert conf.get("otlp_endpoint", "").startswith("http")


# ---- the container image --------------------------------------------------------------------

def dockerfile_stages():
    """[(FROM line, [instructions])], continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    stages = []
    for ln in text.splitlines():
        ln = ln.strip()
        if not ln or ln.startswith("#"):
            continue
        word, _, rest = ln.partition(" ")
        if word.upper() == "FROM":
            stages.append((rest, []))
        elif stages:
            stages[-1][1].append((word.upper(), rest.strip()))
    return stages


def runtime_packages():
    (_, runtime) = dockerfile_stages()[-1]
    pkgs = []
    for word, rest in runtime:
        if word == "RUN":
            for cmd in rest.split("&&"):
                argv = shlex.split(cmd)
                if argv[:2] == ["apt-get", "install"]:
                    pkgs += [a for a in argv[2:] if not a.startswith("-")]
    return pkgs


def test_dockerfile_uses_the_project_steps():
    """The image is built by the project's own steps, not hand-copied compiler lines."""
    stages = dockerfile_stages()
    assert len(stages) == 2
    (build_from, build), (run_from, runtime) = stages
    assert re.fullmatch(r"debian:\$\{DEBIAN_RELEASE\} AS build", build_from)
    assert re.search(r"^ARG DEBIAN_RELEASE=bookworm$", DOCKERFILE.read_text(), re.M)
    assert run_from.startswith("debian:${DEBIAN_RELEASE}")
    cmds = [shlex.split(c) for w, rest in build if w == "RUN" for c in rest.split("&&")]
    assert ["scripts/deps.sh"] in cmds or ["make", "deps"] in cmds, cmds
    assert any(a[0] == "make" and all(x.startswith("-j") for x in a[1:]) for a in cmds), cmds
    assert any(a[:2] == ["make", "install"] and "DESTDIR=/out" in a for a in cmds), cmds
    programs = {argv[0] for argv in cmds}
    assert programs <= {"scripts/deps.sh", "make", "rm"}, f"the build stage runs {programs}"
    # make targets the Makefile has
    for argv in cmds:
        if argv[0] == "make" and len(argv) > 1:
            targets = [a for a in argv[1:] if not a.startswith("-") and "=" not in a]
            for t in targets:
                assert make("-n", t, "DESTDIR=/nonexistent", check=False).returncode == 0, t
    assert ("COPY", "--from=build /out/ /") in runtime
    entry = [rest for w, rest in runtime if w == "ENTRYPOINT"]
    cmd = [rest for w, rest in runtime if w == "CMD"]
    assert yaml.safe_load(entry[0]) == ["/usr/bin/labelprof", "agent"]
    assert yaml.safe_load(cmd[0]) == ["--config", "/etc/labelprof/agent.conf"]
    # what `make install PREFIX=/usr` installs is where ENTRYPOINT looks
    install = next(a for a in cmds if a[:2] == ["make", "install"])
    assert "PREFIX=/usr" in install


def dpkg_package_of(path):
    for p in (path, os.path.realpath(path)):
        for cand in {p, re.sub(r"^/usr(/lib)", r"\1", p), re.sub(r"^(/lib)", r"/usr\1", p)}:
            proc = subprocess.run(["dpkg", "-S", cand], capture_output=True, text=True)
            if proc.returncode == 0:
                return proc.stdout.split(":", 1)[0].split(",")[0].strip()
    pytest.fail(f"no Debian package provides {path}")


class Installed:
    """The installed packages' dependencies (of this machine's architecture)."""

    def __init__(self):
        out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Status}\t${Essential}\t"
                              "${Depends}, ${Pre-Depends}\t${Provides}\n"],
                             capture_output=True, text=True, check=True).stdout
        self.depends, self.provider, self.essential = {}, {}, set()
        for ln in out.splitlines():
            name, status, essential, depends, provides = ln.split("\t")
            if not status.endswith(" installed"):
                continue
            self.depends[name] = depends
            if essential == "yes":
                self.essential.add(name)
            for p in provides.split(","):
                if p.strip():
                    self.provider.setdefault(self.bare(p), name)

    @staticmethod
    def bare(name):
        return re.sub(r"[\s(:].*", "", name.strip())

    def deps(self, pkg):
        out = []
        for alt in self.depends.get(pkg, "").split(","):
            names = [self.bare(a) for a in alt.split("|") if a.strip()]
            found = [n if n in self.depends else self.provider.get(n) for n in names]
            out += [f for f in found if f][:1]
        return out

    def closure(self, pkgs):
        seen, todo = set(), list(pkgs)
        while todo:
            p = todo.pop()
            if p not in seen:
                seen.add(p)
                todo += self.deps(p)
        return seen


def image_labelprof():
    """labelprof as the image's build stage makes it: with a plain `make`. A
    SANITIZE=1 run checks that build (made here if need be), not its own."""
    if not sanitized():
        return LABELPROF
    make(f"-j{os.cpu_count()}", PLAIN_OUTPUT / "labelprof", plain=True)
    return PLAIN_OUTPUT / "labelprof"


def test_runtime_image_has_every_library():
    """Every shared library labelprof loads comes from a package the runtime
    stage installs (or one of their dependencies, or the base image's
    essential packages); the ones it links directly are named."""
    binary = image_labelprof()
    assert not sanitized(binary), f"{binary}: built with SANITIZE=1"
    pkgs = runtime_packages()
    installed = Installed()
    for p in pkgs:
        assert p in installed.depends, f"{p}: not a package of this Debian release installed here"
    base = installed.closure(installed.essential)
    provided = installed.closure(pkgs) | base
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    libs = re.findall(r"=> (/\S+)", ldd) + re.findall(r"^\s+(/\S+) \(", ldd, re.M)
    needed = needed_libraries(binary)
    assert libs and needed
    for lib in libs:
        pkg = dpkg_package_of(lib)
        assert pkg in provided, f"{lib} ({pkg}) is not in the runtime image"
        if os.path.basename(lib) in needed:
            assert pkg in pkgs or pkg in base, f"{lib} ({pkg}): name it in the runtime stage"


# ---- privileges: the capability set is enough, and every capability in it is needed -------

class Capture:
    """One `labelprof record` run as uid 65534 with caps, of a labelled
    workload whose executable was deleted after it started (an upgrade under
    a running service) and of a process busy in the kernel."""

    def __init__(self, caps, tmp_path):
        self.caps = caps
        outdir = shared_tmpdir("labelprof-deploy-")
        exe = os.path.join(outdir, "groundtruth-upgraded")
        shutil.copy2(workload("groundtruth-v1-exe"), exe)
        gt_report = tmp_path / f"gt-{len(caps)}-{time.monotonic_ns()}.json"
        out = os.path.join(outdir, "profile.json")
        kernel = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=1"],
                                  stderr=subprocess.DEVNULL)
        try:
            with started([exe, "--wait-stdin", "--sets", 2, "--output", gt_report]) as wl:
                os.unlink(exe)
                self.gt_pid, self.kernel_pid = wl.pid, kernel.pid
                self.cmd = as_nobody(caps, [LABELPROF, "record", "-p", f"{wl.pid},{kernel.pid}",
                                            "-F", FREQ, "-d", 2, "-o", out])
                self.proc = subprocess.run(self.cmd, stdin=subprocess.DEVNULL,
                                           capture_output=True, text=True, timeout=60)
            self.profile = Profile(load_json(out)) if self.proc.returncode == 0 else None
            self.owner = os.stat(out).st_uid if self.proc.returncode == 0 else None
        finally:
            kernel.kill()
            kernel.wait()
            shutil.rmtree(outdir, ignore_errors=True)
        gt = load_json(gt_report)
        self.sets = {s["function"]: label_set(s["labels"]) for s in gt["sets"]}

    def describe(self):
        return f"`{' '.join(self.cmd)}` exited {self.proc.returncode}: {self.proc.stderr.strip()}"

    def labelled(self):
        """(samples in a burn_set_K function, those carrying set K's labels)."""
        samples = self.profile.of_pids(self.gt_pid)
        in_sets = [s for s in samples if which_function(s, self.sets)]
        right = [s for s in in_sets if labels_of(s) == self.sets[which_function(s, self.sets)]]
        return sum(s["count"] for s in in_sets), sum(s["count"] for s in right)

    def kernel_frames(self):
        """(kernel frames of the busy process, those with a function name)."""
        frames = [f for s in self.profile.of_pids(self.kernel_pid) for f in s["frames"]
                  if f.get("kernel")]
        return len(frames), sum(1 for f in frames if f.get("function"))


@contextlib.contextmanager
def kallsyms_for_syslog_only():
    """/proc/kallsyms showing addresses to CAP_SYSLOG and zeros to other uids
    while the block runs, as kptr_restrict=1 does (and 0 with
    perf_event_paranoid above 1). Otherwise (2 hides them from all, 0 with a
    lower paranoid level shows them to all) it is 1 for the block, then put
    back."""
    kptr_restrict = pathlib.Path("/proc/sys/kernel/kptr_restrict")
    kptr = kptr_restrict.read_text()
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        paranoid = int(f.read())
    if int(kptr) == 1 or (int(kptr) == 0 and paranoid > 1):
        yield
        return
    kptr_restrict.write_text("1")
    try:
        yield
    finally:
        kptr_restrict.write_text(kptr)


def test_unit_capabilities_suffice_for_a_non_root_uid(request, tmp_path):
    """With exactly the unit's capabilities, a non-root uid records a
    root-owned process: labels, user symbols (from a deleted executable),
    kernel symbols."""
    caps = capabilities()
    require_capabilities(caps)
    with kallsyms_for_syslog_only():
        cap = Capture(caps, tmp_path)
    assert cap.proc.returncode == 0, cap.describe()
    assert cap.owner == NOBODY
    in_sets, right = cap.labelled()
    kframes, ksym = cap.kernel_frames()
    measure(request, f"{len(caps)} capabilities as uid {NOBODY}: {right}/{in_sets} samples in "
                     f"burn_set_K carry set K's labels; {ksym}/{kframes} kernel frames named")
    assert in_sets > 0, "no sample in a burn_set_K function: the deleted executable's symbols?"
    assert right >= ATTRIBUTION_MIN * in_sets
    assert kframes > 0, "no kernel frames from dd"
    assert ksym >= 0.9 * kframes


@pytest.mark.parametrize("dropped", capabilities())
def test_each_capability_is_needed(request, tmp_path, dropped):
    """Without any one of them labelprof refuses to start, or loses labels,
    symbols or kernel symbols: the set is not larger than it must be."""
    caps = capabilities()
    require_capabilities(caps)
    # kernel symbols lost for want of CAP_SYSLOG, never of another one
    with kallsyms_for_syslog_only():
        cap = Capture([c for c in caps if c != dropped], tmp_path)
    if cap.proc.returncode != 0:
        measure(request, f"without {dropped}: {cap.proc.stderr.strip().splitlines()[-1]}")
        assert "privileges" in cap.proc.stderr or dropped[4:] in cap.proc.stderr, cap.describe()
        return
    in_sets, right = cap.labelled()
    kframes, ksym = cap.kernel_frames()
    measure(request, f"without {dropped}: {right}/{in_sets} samples in burn_set_K labelled, "
                     f"{ksym}/{kframes} kernel frames named")
    lost_labels = in_sets == 0 or right < ATTRIBUTION_MIN * in_sets
    lost_kernel = kframes > 0 and ksym == 0
    assert lost_labels or lost_kernel, f"nothing is lost without {dropped}: {cap.describe()}"


JIT_WORKLOAD = r"""
import ctypes, mmap, os, platform, sys, threading
code = {"x86_64": b"\xeb\xfe", "aarch64": b"\x00\x00\x00\x14"}[platform.machine()]
# private: a shared anonymous mapping shows as /dev/zero, not as JIT code
m = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
              prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
    f.write(f"{addr:x} {len(code):x} jit_spin_in_host_tmp\n")
threading.Thread(target=ctypes.CFUNCTYPE(None)(addr), daemon=True).start()
print("ready", file=sys.stderr, flush=True)
sys.stdin.read()
os.unlink(f"/tmp/perf-{os.getpid()}.map")
os._exit(0)
"""


def test_private_tmp_keeps_jit_maps_visible(request):
    """PrivateTmp=yes gives the agent its own /tmp; other processes'
    /tmp/perf-PID.map are still found, in their own mount namespace. Here:
    a fresh tmpfs over /tmp in a new mount namespace, as PrivateTmp does."""
    caps = capabilities()
    require_capabilities(caps)
    # the tmpfs hides everything under /tmp, the build too when it lives there (CI clones)
    outside = pathlib.Path(tempfile.mkdtemp(prefix="labelprof-e2e-", dir="/run"))
    outside.chmod(0o755)
    binary = outside / "labelprof"
    shutil.copy2(LABELPROF, binary)
    request.addfinalizer(lambda: shutil.rmtree(outside, ignore_errors=True))
    with started(["/usr/bin/python3", "-c", JIT_WORKLOAD]) as wl:
        inner = shlex.join(as_nobody(caps, [binary, "record", "-p", wl.pid, "-F", FREQ,
                                            "-d", 2]))
        proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               f"mount -t tmpfs tmpfs /tmp && exec {inner}"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    doc = json.loads(proc.stdout)
    # the spinning thread's samples: their user leaf is the JIT code
    leaves = [(next((f for f in s["frames"] if not f.get("kernel")), {}), s["count"])
              for s in doc["samples"] if s["pid"] == wl.pid]
    total = sum(n for _, n in leaves)
    named = sum(n for f, n in leaves if f.get("function") == "jit_spin_in_host_tmp")
    measure(request, f"private /tmp: {named}/{total} samples' user leaf named from the "
                     f"process's own /tmp/perf-{wl.pid}.map")
    assert total and named >= 0.9 * total


# ---- the agent in the unit's sandbox --------------------------------------------------------

class Collector:
    """An OTLP/HTTP endpoint that accepts everything."""

    def __init__(self):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class NotifySocket:
    """What systemd listens on for sd_notify(3), with the sender's credentials."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o666)
        self.messages = []  # (pid, {key: value})

    def wait_for(self, key, value, after=0, timeout=60):
        """The first message from index after on that sets key=value: (index, pid, fields)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, (pid, fields) in enumerate(self.messages[after:], after):
                if fields.get(key) == value:
                    return i, pid, fields
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"no {key}={value} from the agent: {self.messages}")
            self.sock.settimeout(left)
            try:
                data, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
            except socket.timeout:
                continue
            pid = None
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("iII", payload[:12])[0]
            fields = dict(ln.split("=", 1) for ln in data.decode().splitlines() if "=" in ln)
            self.messages.append((pid, fields))

    def close(self):
        self.sock.close()


def syscall_groups():
    out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], capture_output=True,
                         text=True, check=True).stdout
    groups, cur = {}, None
    for ln in out.splitlines():
        if ln.startswith("@"):
            cur = groups.setdefault(ln.split()[0], set())
        elif cur is not None and ln.strip() and not ln.strip().startswith("#"):
            cur.add(ln.strip())
    return groups


def allowed_syscalls():
    """The unit's SystemCallFilter= lines applied in order, as systemd does."""
    groups = syscall_groups()

    def expand(names):
        out, todo = set(), list(names)
        while todo:
            n = todo.pop()
            if n.startswith("@"):
                todo += [m for m in groups[n] if m not in out]
            out.add(n)
        return {n for n in out if not n.startswith("@")}

    lines = service("SystemCallFilter")
    assert lines and not lines[0].startswith("~"), "an allow list"
    allowed = set()
    for ln in lines:
        names = expand(ln.lstrip("~").split())
        allowed = allowed - names if ln.startswith("~") else allowed | names
    return allowed


WRITES = re.compile(r"^(\d+) +(open|openat|openat2|creat|mkdir|mkdirat|rename|renameat|renameat2|"
                    r"unlink|unlinkat|rmdir|link|linkat|symlink|symlinkat|chmod|fchmodat|"
                    r"truncate|chown|fchownat|utimensat|mknod|mknodat)\((.*)$")
PATH_ARG = re.compile(r'(?:(?:AT_FDCWD|\d+)<([^>]*)>, )?"((?:[^"\\]|\\.)*)"')


def written_paths(line):
    """The paths a file-system call of an strace -y line may change, or []."""
    m = WRITES.match(line)
    if not m:
        return []
    call, args = m.group(2), m.group(3)
    if call.startswith("open") or call == "creat":
        if not re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", args) and call != "creat":
            return []
    if call.startswith("mkdir") and "EEXIST" in args:
        return []  # a parent that exists: read-only file systems say so too
    return [os.path.join(d, p) if d and not p.startswith("/") else p
            for d, p in PATH_ARG.findall(args)]


def check_sandbox(trace, agent_exe, state, request):
    """What the agent did under strace, against the unit's settings."""
    allowed = allowed_syscalls()
    families = set(one("RestrictAddressFamilies").split())
    used, socks, writes, wx, ns = set(), set(), set(), [], []
    started_ = False
    with open(trace, errors="replace") as f:
        for ln in f:
            if not started_:
                started_ = f'execve("{agent_exe}"' in ln and ln.rstrip().endswith("= 0")
                continue
            m = re.match(r"^\d+ +([a-z0-9_]+)\(", ln)
            if not m:
                continue
            call = m.group(1)
            used.add(call)
            if call == "socket":
                socks.add(re.match(r"^\d+ +socket\((\w+)", ln).group(1))
            if call in ("mmap", "mprotect", "pkey_mprotect") and \
                    "PROT_WRITE" in ln and "PROT_EXEC" in ln:
                wx.append(ln.strip())
            if call in ("unshare", "setns") or (call.startswith("clone") and "CLONE_NEW" in ln):
                ns.append(ln.strip())
            writes.update(written_paths(ln))
    assert started_, f"no exec of {agent_exe} in {trace}"
    measure(request, f"agent under strace: {len(used)} system calls, sockets {sorted(socks)}, "
                     f"{len(writes)} paths written")
    assert not used - allowed, f"not in SystemCallFilter=: {sorted(used - allowed)}"
    assert socks <= families, f"not in RestrictAddressFamilies=: {sorted(socks - families)}"
    assert not wx, f"MemoryDenyWriteExecute= would refuse: {wx[:3]}"
    assert not ns, f"RestrictNamespaces= would refuse: {ns[:3]}"
    outside = sorted(p for p in writes if not (p + "/").startswith(state + "/"))
    assert not outside, f"ProtectSystem=strict: writes outside the state directory: {outside}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agent_config(source):
    if source == "unit":
        text = AGENT_CONF_EXAMPLE.read_text()
        argv = shlex.split(one("ExecStart"))[1:]
        assert argv[:3] == ["agent", "--config", "/etc/labelprof/agent.conf"]
        return text, argv[1:]
    spec, c = agent_container()
    return doc_of("ConfigMap")["data"]["agent.conf"], c["args"]


@pytest.mark.parametrize("source", ["unit", "daemonset"])
def test_agent_in_the_unit_sandbox(request, tmp_path, source):
    """`labelprof agent` with the unit's (or the DaemonSet's) configuration,
    as uid 65534 with the unit's capabilities: READY=1, RELOADING=1 and
    READY=1 on SIGHUP, STOPPING=1 and exit 0 on SIGTERM, all from the main
    process (NotifyAccess=main); metrics served; profiles sent; and nothing
    the unit's sandbox would refuse. The configuration's paths and addresses
    move to the test's (flags override the file)."""
    caps = capabilities()
    require_capabilities(caps)
    text, args = agent_config(source)
    conf = ini(text)
    work = shared_tmpdir("labelprof-agent-")
    state = os.path.join(work, "state")
    os.mkdir(state, 0o750)
    os.chown(state, NOBODY, NOBODY)  # StateDirectory= does this for the dynamic user
    conf_path = os.path.join(work, "agent.conf")
    with open(conf_path, "w") as f:
        f.write(text)
    collector, notify = Collector(), NotifySocket(work)
    port = free_port()
    overrides = ["--metrics-listen", f"127.0.0.1:{port}",
                 "--otlp-endpoint", f"http://127.0.0.1:{collector.port}"]
    for key in ("output_dir", "spool_dir"):
        if conf.get(key):
            overrides += [f"--{key.replace('_', '-')}", os.path.join(state, key)]
    args = [a if a != args[args.index("--config") + 1] else conf_path for a in args]
    trace = os.path.join(work, "strace.out")
    cmd = ["strace", "-f", "-qq", "-y", "-s", "4096", "-o", trace,
           *as_nobody(caps, [LABELPROF, "agent", *args, *overrides])]
    env = dict(os.environ, NOTIFY_SOCKET=notify.path)
    if sanitized():  # LeakSanitizer cannot run under ptrace; test_agent.py checks leaks
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    try:
        i, main_pid, _ = notify.wait_for("READY", "1")
        with open(f"/proc/{main_pid}/stat") as f:
            assert int(f.read().rsplit(")", 1)[1].split()[1]) == proc.pid, "not the main process"
        assert os.path.realpath(f"/proc/{main_pid}/exe") == str(LABELPROF)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            assert r.status == 200 and b"labelprof_samples_total" in r.read()
        for path in ("/livez", "/healthz"):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                assert r.status == 200 and b'"status":"ok"' in r.read()

        os.kill(main_pid, signal.SIGHUP)
        i, _, fields = notify.wait_for("RELOADING", "1", after=i + 1)
        assert "MONOTONIC_USEC" in fields, fields
        i, _, _ = notify.wait_for("READY", "1", after=i + 1)

        os.kill(main_pid, signal.SIGTERM)
        notify.wait_for("STOPPING", "1", after=i + 1)
        rc = proc.wait(timeout=int(one("TimeoutStopSec").rstrip("s")))
        stderr = proc.stderr.read().decode(errors="replace")
        assert rc == 0, stderr
        assert all(p == main_pid for p, _ in notify.messages), notify.messages
        assert collector.requests, "no profile reached the endpoint"
        assert all(path == "/v1development/profiles" for path, _ in collector.requests)
        check_sandbox(trace, str(LABELPROF), state, request)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        collector.close()
        notify.close()
        shutil.rmtree(work, ignore_errors=True)

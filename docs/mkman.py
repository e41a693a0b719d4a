#!/usr/bin/env python3
"""Writes the labelprof(8) man page from the program's own --help.

    docs/mkman.py LABELPROF INCLUDE CAPABILITIES OUTPUT

The commands are those `LABELPROF --help` lists; each one's section is made
from `LABELPROF COMMAND --help` (argp's layout: usage, documentation,
options in groups, more documentation). INCLUDE (docs/labelprof.8.in) holds
the hand-written sections, as "[SECTION NAME]" lines followed by roff text,
in the order they appear after COMMANDS; [NAME] and [DESCRIPTION] come
first. CAPABILITIES (deploy/capabilities.txt) gives the PRIVILEGES section.

The date is $SOURCE_DATE_EPOCH, else the last commit's, else today's.
"""

import datetime
import os
import re
import subprocess
import sys

OPTION_COLUMN = 20  # argp indents option descriptions further than this
BOILERPLATE = ("Mandatory or optional arguments to long options",)
HIDDEN_OPTIONS = ("--help", "--usage", "--version")


def run_help(binary, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "ARGP_HELP_FMT")}
    env["LC_ALL"] = "C"
    proc = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, env=env,
                          timeout=30)
    if proc.returncode != 0:
        sys.exit(f"mkman: '{binary} {' '.join(args)} --help' exited {proc.returncode}: "
                 f"{proc.stderr.strip()}")
    return proc.stdout


def esc(text):
    """Plain text as roff: backslashes, minus signs, non-ASCII characters."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)


def line(text):
    """One roff text line: never starting with a control character."""
    return "\\&" + text if text[:1] in (".", "'") else text


def commands_of(top_help):
    """(name, summary) of every command `labelprof --help` lists."""
    cmds, inside = [], False
    for ln in top_help.splitlines():
        if ln.strip() == "Commands:":
            inside = True
        elif inside and re.match(r"^  \S", ln):
            name, _, summary = ln.strip().partition(" ")
            cmds.append((name, summary.strip()))
        elif inside and not ln.strip():
            if cmds:
                break
    if not cmds:
        sys.exit("mkman: 'labelprof --help' lists no commands")
    return cmds


def paragraphs(lines):
    """Lines split at blank lines, each paragraph joined into one string."""
    out, cur = [], []
    for ln in lines + [""]:
        if ln.strip():
            cur.append(ln.strip())
        elif cur:
            out.append(" ".join(cur))
            cur = []
    return out


def parse_command_help(text):
    """argp --help: usage lines, doc paragraphs before and after the
    options, and the options as (group, [(spec, description)])."""
    lines = text.splitlines()
    usage, i = [], 0
    while i < len(lines) and (lines[i].startswith("Usage:") or lines[i].lstrip().startswith("or:")):
        usage.append(re.sub(r"^\s*(Usage|or):\s*", "", lines[i]))
        i += 1
    pre = []
    while i < len(lines) and not re.match(r"^ +-|^ \S.*:$", lines[i]):
        pre.append(lines[i])
        i += 1
    groups, group, opts, post = [], None, None, []
    for ln in lines[i:]:
        m = re.match(r"^ {2,}(-.*?)(?: {2,}(\S.*))?$", ln)
        if m and len(ln) - len(ln.lstrip()) < OPTION_COLUMN and not post:
            if opts is None:
                opts = []
                groups.append((group, opts))
            opts.append([m.group(1).strip(), m.group(2) or ""])
        elif re.match(r"^ \S.*:$", ln) and not post:
            group, opts = ln.strip()[:-1], None
        elif ln.startswith(" " * OPTION_COLUMN) and ln.strip() and opts and not post:
            opts[-1][1] = (opts[-1][1] + " " + ln.strip()).strip()
        elif not ln.strip() and not post:
            continue
        else:
            post.append(ln)
    groups = [(g, [o for o in os if not any(h in o[0] for h in HIDDEN_OPTIONS)])
              for g, os in groups]
    post = [p for p in paragraphs(post) if not p.startswith(BOILERPLATE)]
    return usage, paragraphs(pre), [(g, os) for g, os in groups if os], post


def option_spec(spec):
    """"-d, --duration=SECONDS" as roff: names bold, arguments italic."""
    parts = []
    for item in spec.split(", "):
        m = re.match(r"^(-{1,2}[^=\[ ]+)(\[?=)?(.*)$", item)
        if not m:
            parts.append(esc(item))
            continue
        name, sep, arg = m.groups()
        s = f"\\fB{esc(name)}\\fR"
        if sep:
            closing = "]" if sep.startswith("[") and arg.endswith("]") else ""
            arg = arg[:-1] if closing else arg
            s += f"{esc(sep)}\\fI{esc(arg)}\\fR{closing}"
        elif arg.strip():
            s += f" \\fI{esc(arg.strip())}\\fR"
        parts.append(s)
    return ", ".join(parts)


def usage_roff(usage):
    """"labelprof record [OPTION...] ..." with the command words bold."""
    m = re.match(r"^(labelprof(?: [a-z][\w-]*)?)(.*)$", usage)
    words, rest = (m.group(1), m.group(2)) if m else (usage, "")
    return f"\\fB{esc(words)}\\fR{esc(rest)}"


def command_section(name, summary, text):
    usage, pre, groups, post = parse_command_help(text)
    out = [f".SS {name}", line(esc(summary[:1].upper() + summary[1:]) + "."), ".PP"]
    for u in usage:
        out += [line(usage_roff(u)), ".br"]
    for p in pre:
        out += [".PP", line(esc(p))]
    for group, opts in groups:
        if group:
            out += [".PP", f"\\fI{esc(group)}:\\fR"]
        for spec, doc in opts:
            out += [".TP", line(option_spec(spec)), line(esc(doc))]
    for p in post:
        out += [".PP", line(esc(p))]
    return out, usage


def read_include(path):
    """The [SECTION] blocks of the hand-written include, in order."""
    sections, cur = [], None
    with open(path, encoding="utf-8") as f:
        for ln in f.read().splitlines():
            m = re.match(r"^\[([A-Z][A-Z ]*)\]$", ln)
            if m:
                cur = (m.group(1), [])
                sections.append(cur)
            elif cur is not None:
                cur[1].append(ln)
            elif ln.strip() and not ln.startswith('.\\"'):
                sys.exit(f"mkman: {path}: text before the first [SECTION]: {ln!r}")
    return sections


def capabilities(path):
    """(name, why) of every capability deploy/capabilities.txt lists."""
    names, why, cur = [], {}, None
    with open(path, encoding="utf-8") as f:
        for ln in f.read().splitlines():
            m = re.match(r"^# (CAP_[A-Z_]+)\s+(\S.*)$", ln)
            if m:
                cur = m.group(1)
                why[cur] = m.group(2)
            elif cur and re.match(r"^#\s{2,}\S", ln):
                why[cur] += " " + ln[1:].strip()
            elif not ln.startswith("#") and ln.strip():
                names.append(ln.strip())
                cur = None
            else:
                cur = None
    return [(n, why.get(n, "")) for n in names]


def page_date():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        try:
            epoch = subprocess.run(["git", "log", "-1", "--format=%ct"], capture_output=True,
                                   text=True, timeout=10,
                                   cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        except OSError:
            epoch = ""
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch.isdigit()
            else datetime.datetime.now(datetime.timezone.utc))
    return when.strftime("%Y-%m-%d")


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    binary, include, caps_path, output = argv[1:]
    sections = read_include(include)
    first = {n: body for n, body in sections if n in ("NAME", "DESCRIPTION")}
    if set(first) != {"NAME", "DESCRIPTION"}:
        sys.exit(f"mkman: {include} needs [NAME] and [DESCRIPTION]")

    cmds = commands_of(run_help(binary))
    body, synopsis = [], []
    for name, summary in cmds:
        sec, usage = command_section(name, summary, run_help(binary, name))
        body += sec
        synopsis += usage or [f"labelprof {name}"]

    out = ['.\\" Generated by docs/mkman.py from labelprof --help and docs/labelprof.8.in:',
           '.\\" edit those, not this file.',
           f'.TH LABELPROF 8 "{page_date()}" "labelprof" "System Administration"',
           ".SH NAME", *first["NAME"], ".SH SYNOPSIS"]
    for u in synopsis:
        out += [line(usage_roff(u)), ".br"]
    out += [".SH DESCRIPTION", *first["DESCRIPTION"], ".SH COMMANDS", *body]
    out += [".SH PRIVILEGES",
            "Sampling, and reading other processes' labels, need root or a user holding "
            "these capabilities (what the systemd unit and the Kubernetes DaemonSet grant; "
            "converting saved profiles and inspecting ELF files need none):"]
    for name, why in capabilities(caps_path):
        out += [".TP", f"\\fB{esc(name)}\\fR", line(esc(why[:1].upper() + why[1:]))]
    for name, text in sections:
        if name not in first:
            out += [f".SH {name}", *text]
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, output)


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""docs-check: the settings and commands the documents list are the rows
of the code's tables, so that a setting or an option is written down in
one place (common/config.c's config_keys, common/command.c's table) and
the hand-written pages cannot drift from it.

usage: docs-check.py CONFIG_ROWS MANDIR PROTOCOL_MD [README_MD]

CONFIG_ROWS prints the rows as JSON (tests/unit/config-rows.c); MANDIR
holds the configured man pages (build/man); PROTOCOL_MD is
docs/protocol.md. Checked, each against the rows and in their order:

  perfspilld.json(5)  every key under its section (recording, output and
                      retention, daemon keys), with its type, "Default:"
                      and "Applies:"
  perfspillctl(1)     START OPTIONS: one entry per request key naming its
                      short letter, long names (--no-KEY for booleans) and
                      value name; COMMANDS: every command, with the
                      options of its usage
  docs/protocol.md    the settings table: the request keys, their type
                      and when they apply
  every man page      SEE ALSO names every other page of the project
  README.md           the install table (README's, or docs/guide.md's)
                      names every man page and every command (the pages
                      of sections 1 and 8)
  the drain           README, docs/guide.md, every man page,
                      docs/protocol.md, conf/perfspilld.json and start's
                      --help say the same of who drains the rings: the
                      drain thread (never "the loop", which only answers
                      the socket and finishes files); README and
                      perfspilld(8) say so, and every description of
                      wakeup_pct wakes it

Prints every difference and exits 1 when there is one.
"""
import json
import os
import re
import subprocess
import sys

ESCAPES = [("\\-", "-"), ("\\(dq", '"'), ("\\%", ""), ("\\&", ""),
           ("\\(em", "\u2014"), ("\\(ha", "^"), ("\\(rs", "\\"),
           ("\\e", "\\"), ("\\ ", " ")]
# the words a page uses for each kind of value the rows know
TYPES = {"value": ("integer", "path", "name", "string"), "size": ("size",),
         "duration": ("duration",), "boolean": ("boolean",),
         "list": ("array",), "objects": ("array of objects",)}

problems = []


def problem(where, msg):
    problems.append("%s: %s" % (where, msg))


def unescape(s):
    s = re.sub(r"\\f[BIRP]", "", s)
    for a, b in ESCAPES:
        s = s.replace(a, b)
    return s


def roff_args(s):
    return [a[1:-1] if a.startswith('"') else a
            for a in re.findall(r'"[^"]*"|\S+', s)]


def roff_text(line):
    """The text of one roff line: a font macro's words, or the line."""
    m = re.match(r"\.(B|I|BR|RB|IR|RI|BI|IB)\s+(.*)", line)
    if m is None:
        return unescape(line)
    args = [unescape(a) for a in roff_args(m.group(2))]
    # .B and .I keep their spaces; the alternating ones join their words
    return " ".join(args) if len(m.group(1)) == 1 else "".join(args)


def sections(path):
    """{section name: [lines]} of a man page."""
    out, cur = {}, None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith(".\\\""):
                continue
            if line.startswith(".SH "):
                cur = roff_args(line[4:])[0] if line[4:].startswith('"') \
                    else line[4:].strip()
                out[cur] = []
            elif cur is not None:
                out[cur].append(line)
    return out


def entries(lines):
    """The .TP entries of a section: [(tag, [body lines])]."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == ".TP" and i + 1 < len(lines):
            tag = roff_text(lines[i + 1])
            body = []
            i += 2
            while i < len(lines) and lines[i] not in (".TP", ".PP"):
                body.append(lines[i])
                i += 1
            out.append((tag, body))
        else:
            i += 1
    return out


def text(body):
    return re.sub(r"\s+", " ", " ".join(
        roff_text(l) for l in body if not l.startswith(".IP"))).strip()


def default_text(row):
    """The default as the json page is held to write it, quotes and list
    brackets aside."""
    if row["default"] is None:
        return "not set"
    return row["default"]


def page_default(s):
    """What follows "Default:", without a remark in brackets, quotes or a
    list's brackets: "[\"cpu-clock\"]" -> "cpu-clock"."""
    s = re.split(r"\s+\(", s, 1)[0].strip().rstrip(".")
    if s.startswith("["):
        try:
            return ",".join(json.loads(s))
        except ValueError:
            return s
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        return s[1:-1]
    return s


def check_json5(path, keys):
    where = os.path.basename(path)
    secs = sections(path)
    want = {
        "RECORDING KEYS": [k for k in keys if k["when"] == "next start"],
        "OUTPUT AND RETENTION KEYS": [k for k in keys if k["when"] == "live"],
        "DAEMON KEYS": [k for k in keys if k["when"] == "daemon"],
    }
    for sec, rows in want.items():
        got = entries(secs.get(sec, []))
        names = [t for t, _ in got]
        if names != [r["name"] for r in rows]:
            problem(where, "%s lists %s; the rows say %s" % (
                sec, names, [r["name"] for r in rows]))
        for tag, body in got:
            row = next((r for r in rows if r["name"] == tag), None)
            if row is None:
                continue
            typ = roff_text(body[0]) if body else ""
            if not typ.startswith(TYPES[row["kind"]]):
                problem(where, "%s is '%s'; its row is a %s" % (
                    tag, typ, row["kind"]))
            t = text(body)
            m = re.search(r"Default:\s*(.*?)\s*Applies:", t)
            if m is None:
                problem(where, "%s: no 'Default: ... Applies:'" % tag)
                continue
            if page_default(m.group(1)) != default_text(row):
                problem(where, "%s: Default: %s; its row says %s" % (
                    tag, m.group(1), default_text(row)))
            applies = t[m.end():].strip()
            if not applies.startswith(row["when"]):
                problem(where, "%s: Applies: %s; its row says %s" % (
                    tag, applies, row["when"]))


def option_names(tag):
    return set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", tag))


def check_ctl1(path, keys, commands):
    where = os.path.basename(path)
    secs = sections(path)
    req = [k for k in keys if k["when"] != "daemon"]
    got = entries(secs.get("START OPTIONS", []))
    order = []
    for tag, _ in got:
        opts = option_names(tag)
        row = next((k for k in req
                    if "--" + k["name"].replace("_", "-") in opts), None)
        if row is None:
            problem(where, "START OPTIONS: '%s' is no request key" % tag)
            continue
        order.append(row["name"])
        lname = row["name"].replace("_", "-")
        want = {"--" + lname}
        if row["opt"]:
            want.add("-" + row["opt"])
        if row["alias"]:
            want.add("--" + row["alias"])
        if row["kind"] == "boolean":
            want.add("--no-" + lname)
        if opts != want:
            problem(where, "START OPTIONS: '%s' names %s; the row gives %s"
                    % (tag, sorted(opts), sorted(want)))
        metas = set(re.findall(r"=(\w+)", tag)) | set(
            re.findall(r"(?<![\w-])-\w (\w+)", tag))
        wantm = {row["metavar"].lower()} if row["metavar"] else set()
        if metas != wantm:
            problem(where, "START OPTIONS: '%s' takes %s; the row says %s" %
                    (tag, sorted(metas) or "no value", sorted(wantm) or
                     "no value"))
    if order != [k["name"] for k in req]:
        problem(where, "START OPTIONS in the order %s; the rows: %s" % (
            order, [k["name"] for k in req]))

    got = entries(secs.get("COMMANDS", []))
    for c in commands:
        tag = next((t for t, _ in got if t.split()[0] == c["name"]), None)
        if tag is None:
            problem(where, "COMMANDS has no entry for %s" % c["name"])
            continue
        missing = option_names(c["usage"]) - option_names(tag)
        if missing:
            problem(where, "COMMANDS: '%s' lacks %s of its usage '%s'" % (
                tag, sorted(missing), c["usage"]))


def check_protocol(path, keys):
    where = os.path.basename(path)
    with open(path) as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines)
                  if l.startswith("| key | type | range | when |")), None)
    if start is None:
        problem(where, "no settings table (| key | type | range | when |)")
        return
    rows = []
    for l in lines[start + 2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip("|").split("|")]
        rows.append(cells)
    req = [k for k in keys if k["when"] != "daemon"]
    names = [r[0].strip("`") for r in rows]
    if names != [k["name"] for k in req]:
        problem(where, "the settings table lists %s; the rows say %s" % (
            names, [k["name"] for k in req]))
    for r in rows:
        row = next((k for k in req if k["name"] == r[0].strip("`")), None)
        if row is None or len(r) != 4:
            continue
        if not r[1].startswith(TYPES[row["kind"]]):
            problem(where, "%s is '%s'; its row is a %s" % (
                row["name"], r[1], row["kind"]))
        if not r[3].startswith(row["when"]):
            problem(where, "%s applies '%s'; its row says %s" % (
                row["name"], r[3], row["when"]))


def pages(mandir):
    """The project's man pages in mandir: [(name, section)]."""
    return sorted((f.rsplit(".", 1)[0], f.rsplit(".", 1)[1])
                  for f in os.listdir(mandir)
                  if re.match(r".+\.[1-8]$", f))


def check_see_also(mandir):
    """Each page's SEE ALSO names every other page of the project: a
    reader of one finds the rest (perfspill-flame(1) included)."""
    all_pages = pages(mandir)
    for name, sec in all_pages:
        where = "%s.%s" % (name, sec)
        see = " ".join(roff_text(l) for l in sections(
            os.path.join(mandir, where)).get("SEE ALSO", []))
        for other, osec in all_pages:
            if (other, osec) != (name, sec) and \
                    "%s(%s)" % (other, osec) not in see:
                problem(where, "SEE ALSO does not name %s(%s)" % (other,
                                                                  osec))


def check_readme(path, mandir):
    """README's install table: every man page, and every command (the
    pages of sections 1 and 8), where the package puts them."""
    where = os.path.basename(path)
    with open(path) as f:
        rows = [l for l in f.read().splitlines() if l.startswith("| ")]
    # the README's first screen leaves the table to docs/guide.md
    guide = os.path.join(os.path.dirname(os.path.abspath(path)), "docs",
                         "guide.md")
    if not any(r.startswith("| man pages |") for r in rows) and \
            os.path.exists(guide):
        where = "docs/guide.md"
        with open(guide) as f:
            rows = [l for l in f.read().splitlines() if l.startswith("| ")]
    mans = next((r for r in rows if r.startswith("| man pages |")), None)
    if mans is None:
        problem(where, "the install table has no 'man pages' row")
        return
    cmds = next((r for r in rows if "`perfspilld`" in r.split("|")[1]), "")
    for name, sec in pages(mandir):
        if "`%s(%s)`" % (name, sec) not in mans:
            problem(where, "the install table's man pages lack %s(%s)" % (
                name, sec))
        if sec in ("1", "8") and "`%s`" % name not in cmds.split("|")[1]:
            problem(where, "the install table's commands lack %s" % name)


# Wordings of the old design, when one libevent loop drained the rings
# into a cblock per ring: a page that says one of them is wrong.
STALE_DRAIN = [
    r"\bdrain loop\b",
    r"\bwakes? (up )?the (event |libevent )?loop\b",
    r"\bloop drains?\b",
    r"\bdrain(s|ed|ing)?\b[^.]{0,40}\bfrom (one|its|the|an?)"
    r" (libevent |event )?loop\b",
    r"\bcop(y|ies) each drain into a per-ring",
]


def check_drain(texts, rows):
    """texts: {where: text}. No stale wording anywhere; the pages that
    describe the drain name the drain thread; wakeup_pct wakes it in
    every description, --help's row included."""
    for where, t in texts.items():
        flat = re.sub(r"\s+", " ", t)
        for pat in STALE_DRAIN:
            m = re.search(pat, flat, re.I)
            if m:
                problem(where, "says '%s': the drain thread drains the "
                        "rings, not the loop" % m.group(0))
    for where in ("README.md", "perfspilld.8"):
        if where in texts and "drain thread" not in re.sub(
                r"\s+", " ", texts[where]):
            problem(where, "does not say that a drain thread drains the "
                    "rings")
    row = next((r for r in rows if r["name"] == "wakeup_pct"), None)
    if row is not None and "drain thread" not in (row["help"] or ""):
        problem("start --help", "wakeup_pct does not wake the drain thread")
    for where, t in texts.items():
        flat = re.sub(r"\s+", " ", t)
        for m in re.finditer(r"wakeup[_-]pct", flat):
            near = flat[m.end():m.end() + 160]
            if "wake" in near and "drain thread" not in near:
                problem(where, "wakeup_pct wakes something other than the "
                        "drain thread: '%s'" % near[:80])


def drain_texts(mandir, protocol, readme):
    texts = {}
    for name, sec in pages(mandir):
        with open(os.path.join(mandir, "%s.%s" % (name, sec))) as f:
            texts["%s.%s" % (name, sec)] = "\n".join(
                unescape(roff_text(l)) for l in f.read().splitlines())
    conf = os.path.join(os.path.dirname(os.path.abspath(protocol)), "..",
                        "conf", "perfspilld.json")
    guide = os.path.join(os.path.dirname(os.path.abspath(protocol)),
                         "guide.md")
    for where, path in (("protocol.md", protocol), ("README.md", readme),
                        ("docs/guide.md", guide),
                        ("conf/perfspilld.json", conf)):
        if path and os.path.exists(path):
            with open(path) as f:
                texts[where] = f.read()
    return texts


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__)
        return 2
    rows = json.loads(subprocess.run([argv[0]], check=True,
                                     capture_output=True, text=True).stdout)
    check_json5(os.path.join(argv[1], "perfspilld.json.5"), rows["keys"])
    check_ctl1(os.path.join(argv[1], "perfspillctl.1"), rows["keys"],
               rows["commands"])
    check_protocol(argv[2], rows["keys"])
    check_see_also(argv[1])
    if len(argv) == 4:
        check_readme(argv[3], argv[1])
    check_drain(drain_texts(argv[1], argv[2], argv[3] if len(argv) == 4
                            else None), rows["keys"])
    for p in problems:
        print("docs-check: " + p)
    if problems:
        return 1
    print("docs-check: %d settings, %d commands: the pages agree with the "
          "rows" % (len(rows["keys"]), len(rows["commands"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

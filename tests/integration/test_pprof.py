"""perfspill-flame -P: pprof's profile.proto, read by real readers. go tool
pprof (Debian golang-go) reads the encoder's synthetic profile (mappings
with build-ids, inlined frames, labels) and the profile of a recording
of tests/flametarget, whose -raw stacks and -top flat counts are exactly
those of the folded output; speedscope (npm) loads it in headless
Chromium; ship-pyroscope.sh with SHIP_FORMAT=pprof posts it to a local
receiver as Pyroscope's /ingest takes it (multipart, format=pprof)."""
import collections
import email.parser
import email.policy
import gzip
import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse

import harness
import test_flame
from test_flame import (flame, folded, manifest, recording, rotated,
                        Receiver, SHIP, FLAME, utc_ns)

UNIT = os.path.join(harness.BUILD, "tests", "unit", "test-pprof")
_work = harness.workdir("perfspill-pprof-test-")


def go_pprof(*args):
    go = shutil.which("go")
    if go is None:
        raise harness.Skip("go is not installed (Debian package golang-go; "
                           "scripts/deps installs it)")
    env = dict(os.environ, HOME=os.environ.get("HOME", "/root"),
               GOCACHE=os.path.join(_work, "gocache"), GOFLAGS="")
    p = subprocess.run([go, "tool", "pprof"] + list(args),
                       capture_output=True, text=True, timeout=300, env=env,
                       errors="replace")
    assert p.returncode == 0, p.stderr
    return p.stdout


def parse_raw(text):
    """go tool pprof -raw: ({stack: (count, nanos)} root first, names
    joined by ';', with labels per stack, mappings, header lines)."""
    lines = text.splitlines()
    i = lines.index("Samples:")
    header = lines[:i]
    j = lines.index("Locations")
    k = lines.index("Mappings")
    locs = {}
    cur = None
    for l in lines[j + 1:k]:
        m = re.match(r"\s*(\d+): (0x[0-9a-f]+)(?: M=(\d+))?\s*(.*)$", l)
        if m:
            cur = int(m.group(1))
            name = m.group(4).rsplit(" :", 1)[0] if m.group(4) else ""
            locs[cur] = {"addr": int(m.group(2), 16),
                         "map": int(m.group(3) or 0),
                         "names": [name] if name else []}
        elif l.strip():
            locs[cur]["names"].append(l.strip().rsplit(" :", 1)[0])
    maps = {}
    for l in lines[k + 1:]:
        m = re.match(r"(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) "
                     r"(\S+)(?: ([0-9a-f]+))?", l)
        if m:
            maps[int(m.group(1))] = {"start": int(m.group(2), 16),
                                     "file": m.group(5),
                                     "build_id": m.group(6)}
    samples = []
    for l in lines[i + 2:j]:
        m = re.match(r"\s*(\d+)\s+(\d+): ([\d ]*)$", l)
        if m:
            ids = [int(x) for x in m.group(3).split()]
            samples.append({"count": int(m.group(1)),
                            "nanos": int(m.group(2)), "locs": ids,
                            "labels": {}})
        elif l.strip():
            for key, val in re.findall(r"(\w+):\[([^\]]*)\]", l):
                samples[-1]["labels"][key] = val
    return header, samples, locs, maps


def stacks_of(samples, locs):
    """{root-first names joined by ';': count}, inlined names expanded
    (outermost first), a run of [unknown] frames one, as fold has them."""
    c = collections.Counter()
    for s in samples:
        names = []
        for lid in s["locs"]:
            new = locs[lid]["names"] or ["?"]
            # fold draws a run of [unknown] frames as one; the profile
            # keeps each address
            if new == ["[unknown]"] and names[-1:] == ["[unknown]"]:
                continue
            names += new
        c[";".join(reversed(names))] += s["count"]
    return c


def test_synthetic_profile_read_by_go_tool_pprof():
    """The encoder's own profile: go tool pprof -raw gives back its two
    mappings with file, offset and build-id, its addresses, the inlined
    frame inside its caller, both samples with their labels (a number
    among them), the unnamed location, time, duration and period."""
    path = os.path.join(_work, "synthetic.pb.gz")
    subprocess.run([UNIT, path], check=True)
    with gzip.open(path) as f:
        assert f.read(2) == b"\x0a\x04"     # field 1, 4 bytes: a ValueType
    raw = go_pprof("-raw", "-symbolize=none", path)
    header, samples, locs, maps = parse_raw(raw)
    assert "PeriodType: cpu nanoseconds" in header
    assert "Period: 1001001" in header
    assert "Comment: synthetic" in header
    assert "Time: 2025-12-04 14:00:00 +0000 UTC" in header
    assert "Duration: 2s" in header
    assert maps == {
        1: {"start": 0x400000, "file": "/usr/bin/app",
            "build_id": "0123456789abcdef0123456789abcdef01234567"},
        2: {"start": 0x7f0000000000,
            "file": "/lib/x86_64-linux-gnu/libc.so.6",
            "build_id": "fedcba9876543210"}}, maps
    assert "0x7f0000000000/0x7f0000100000/0x28000 " in raw
    by_addr = {l["addr"]: l for l in locs.values()}
    assert by_addr[0x400120]["names"] == ["inner_inlined", "outer"]
    assert by_addr[0x400120]["map"] == 1
    assert by_addr[0x7f0000028100] == {"addr": 0x7f0000028100, "map": 2,
                                       "names": ["memcpy"]}
    assert by_addr[0xdead0000]["names"] == [] and \
        by_addr[0xdead0000]["map"] == 0
    assert stacks_of(samples, locs) == {
        "main;outer;inner_inlined;memcpy": 3, "main;leaf": 7, "?": 1}
    labels = sorted((s["count"], s["nanos"], tuple(sorted(
        s["labels"].items()))) for s in samples)
    assert labels == [
        (1, 1001001, (("comm", "app"),)),
        (3, 3003003, (("comm", "app"), ("host", "h1"), ("pid", "4242"))),
        (7, 7007007, (("comm", "app"), ("host", "h1"), ("pid", "4243")))]


def profile_of_recording():
    """The profile of the recording's flametarget (by pid: another
    flametarget may run beside it on a shared machine)."""
    path = recording()
    out = os.path.join(_work, "flametarget.pb.gz")
    if not os.path.exists(out):
        flame("-q", "--pid", str(test_flame._cache["one pid"]), "-P", out,
              path)
    return path, out


def test_raw_stacks_and_top_equal_the_folded_output():
    """go tool pprof -raw of a recording's profile gives the folded
    output's stacks with their counts, one for one; -top's flat samples
    per function are the folded leaves'; every sample of flametarget
    carries its labels; its binary's mapping has the build-id the
    manifest lists; the time range is the manifest's."""
    path, out = profile_of_recording()
    pid = str(test_flame._cache["one pid"])
    want = folded(flame("-q", "--pid", pid, "--roots", "none", "-f", "-",
                        path).stdout)
    # -symbolize=none: the names as written (pprof would demangle C++)
    header, samples, locs, maps = parse_raw(go_pprof("-raw",
                                                     "-symbolize=none", out))
    got = stacks_of(samples, locs)
    assert got == want, (sorted((got - want).items())[:5],
                         sorted((want - got).items())[:5])
    m = manifest(path)
    # the comms the folded output roots the process's stacks in (a
    # sanitizer's own thread may have none of its own)
    comms = {k.split(";")[0] for k in folded(flame(
        "-q", "--pid", pid, "-f", "-", path).stdout)}
    assert sum(s["count"] for s in samples if s["labels"]["comm"] ==
               "flametarget") > 0.9 * sum(want.values())
    for s in samples:
        assert s["labels"]["comm"] in comms, (s, comms)
        assert s["labels"]["pid"] == pid and \
            s["labels"]["event"] == "cpu-clock" and \
            s["labels"]["host"] == m["host"], s
        # cpu-clock's period, about 1/999 s each
        assert 900000 * s["count"] <= s["nanos"] <= 1200000 * s["count"], s
    target = os.path.realpath(test_flame.TARGET)
    bids = {b["path"]: b["build_id"] for b in m["buildids"]}
    mine = [x for x in maps.values() if x["file"] == target]
    assert mine and all(x["build_id"] == bids[target] for x in mine), \
        (mine, bids.get(target))
    t = [l for l in header if l.startswith("Time: ")][0]
    assert t.startswith("Time: " + m["first_sample_utc_approx"][:10]), t
    # -top: flat samples per function, nothing dropped
    top = go_pprof("-top", "-symbolize=none", "-sample_index=samples",
                   "-nodefraction=0", "-nodecount=1000000", out)
    flat = {}
    for l in top.splitlines():
        f = l.split()
        if len(f) >= 6 and f[0].isdigit():
            flat[" ".join(f[5:])] = int(f[0])
    leaves = collections.Counter()
    for s, n in want.items():
        leaves[s.split(";")[-1]] += n
    assert {k: v for k, v in flat.items() if v} == dict(leaves), \
        (flat, leaves)
    total = sum(want.values())
    assert "Total samples = %d" % total in top, top[:400]
    seventy, thirty = test_flame.leaves(want)
    assert abs(seventy / (seventy + thirty) - 0.70) <= 0.03


def test_top_names_what_the_profile_covers():
    """go tool pprof -top's "File:" is the profile's first mapping, which
    pprof takes for the main binary: what the profile covers (every
    process, or the one comm asked for), never the kernel's mapping that
    the first sample happened to hit."""
    path = recording()
    out = os.path.join(_work, "whole.pb.gz")
    flame("-q", "-P", out, path)
    top = go_pprof("-top", "-symbolize=none", out)
    assert "File: every process (perfspill)" in top.splitlines(), top[:300]
    out = os.path.join(_work, "comm.pb.gz")
    flame("-q", "--comm", "flametarget", "-P", out, path)
    top = go_pprof("-top", "-symbolize=none", out)
    assert "File: flametarget" in top.splitlines(), top[:300]


def test_per_host_names_and_filters():
    """--per-host with %h: one profile per host (the manifests'), each
    holding that host's samples only, as many as its folded output."""
    a, b = rotated()
    pid = str(test_flame._cache["two pid"])
    fleet = os.path.join(_work, "fleet")
    for host, src in (("alpha", a), ("beta", b)):
        os.makedirs(os.path.join(fleet, host))
        dst = os.path.join(fleet, host, os.path.basename(src))
        shutil.copy2(src, dst)
        m = manifest(src)
        m["host"] = host
        with open(dst + ".json", "w") as f:
            json.dump(m, f)
    flame("-q", "--pid", pid, "--per-host", "-P",
          os.path.join(_work, "%h.pb.gz"), fleet)
    for host, src in (("alpha", a), ("beta", b)):
        _, samples, locs, _ = parse_raw(go_pprof(
            "-raw", "-symbolize=none",
            os.path.join(_work, "%s.pb.gz" % host)))
        assert {s["labels"]["host"] for s in samples} == {host}
        want = folded(flame("-q", "--pid", pid, "--roots", "none", "-f",
                            "-", src).stdout)
        assert stacks_of(samples, locs) == want


def speedscope_dir():
    for root in (os.environ.get("SPEEDSCOPE_DIR"),
                 subprocess.run(["npm", "root", "-g"], capture_output=True,
                                text=True).stdout.strip()
                 if shutil.which("npm") else None):
        if root:
            d = os.path.join(root, "speedscope", "dist", "release") \
                if not root.endswith("release") else root
            if os.path.exists(os.path.join(d, "index.html")):
                return d
    raise harness.Skip("speedscope is not installed (npm install -g "
                       "speedscope; scripts/deps installs it)")


def test_speedscope_loads_it_in_chromium():
    """speedscope, in headless Chromium, imports the profile as its own
    command line hands it one: its title names the file, and its sandwich
    view lists leaf_seventy and leaf_thirty with their samples."""
    import base64
    import cdp
    d = speedscope_dir()
    _, out = profile_of_recording()
    js = os.path.join(_work, "profile.js")
    with open(out, "rb") as f, open(js, "w") as o:
        o.write("speedscope.loadFileFromBase64(%s, %s)" % (
            json.dumps("flametarget.pb.gz"),
            json.dumps(base64.b64encode(f.read()).decode())))
    url = "file://%s/index.html#localProfilePath=%s" % (d, js)
    with cdp.Chromium(url, 1200, 800) as c:
        harness.wait_for(lambda: "flametarget.pb.gz" in c.eval(
            "document.title"), 30, "speedscope's title")
        # the sandwich view: a table of functions in the page itself
        # the innermost element whose text is the tab's name, clicked
        # until the view is there (a click before the import ends is lost)
        def sandwich():
            c.eval("""(function () {
                var b = Array.prototype.slice.call(
                    document.querySelectorAll('*')).filter(function (e) {
                        return /Sandwich$/.test(e.textContent.trim()); });
                b[b.length - 1].click(); })()""")
            texts = []
            for _ in range(2):
                time.sleep(0.5)
                texts.append(c.eval("document.body.innerText"))
            return texts[1] if all("leaf_seventy" in t and "leaf_thirty"
                                   in t for t in texts) else None
        text = harness.wait_for(sandwich, 30, "the sandwich table")
        assert "leaf_thirty" in text, text[:2000]
        # a row: "TOTAL (P%)", "SELF (P%)", "NAME"; leaf_seventy's self
        # time is what go tool pprof gives it (cpu/nanoseconds)
        rows = [l.strip() for l in text.splitlines()]
        i = rows.index("leaf_seventy")
        m = re.match(r"([\d.]+)(ns|µs|ms|s) ", rows[i - 1])
        self_ms = float(m.group(1)) * {"ns": 1e-6, "µs": 1e-3, "ms": 1,
                                       "s": 1e3}[m.group(2)]
        top = go_pprof("-top", "-sample_index=cpu", "-unit=ms",
                       "-nodefraction=0", "-nodecount=1000000", out)
        flat = [l.split() for l in top.splitlines()
                if l.split()[-1:] == ["leaf_seventy"]][0][0]
        # speedscope shows three digits
        assert abs(float(flat.rstrip("ms")) - self_ms) <= \
            0.005 * self_ms, (flat, rows[i - 1])
        shot = os.path.join(test_flame.ARTIFACTS, "test_pprof-speedscope.png")
        os.makedirs(test_flame.ARTIFACTS, exist_ok=True)
        c.screenshot(shot)
        print("screenshot: " + shot)


def test_pyroscope_pprof_upload():
    """ship-pyroscope.sh with SHIP_FORMAT=pprof: one POST to /ingest with
    name, from, until and format=pprof, a multipart form whose part
    "profile" is the file's gzipped profile (every sample of the file,
    per go tool pprof); a wrong SHIP_FORMAT is refused before any
    request."""
    path = recording()
    rcv = Receiver()
    try:
        env = dict(os.environ, SHIP_PYROSCOPE=rcv.url, PERFSPILL_FLAME=FLAME,
                   SHIP_FORMAT="pprof")
        p = subprocess.run([SHIP, path, path + ".json"], capture_output=True,
                           text=True, env=env)
        assert p.returncode == 0, p.stderr
        assert len(rcv.requests) == 1, rcv.requests
        method, url, headers, body = rcv.requests[0]
        u = urllib.parse.urlsplit(url)
        q = urllib.parse.parse_qs(u.query, strict_parsing=True)
        m = manifest(path)
        assert method == "POST" and u.path == "/ingest", url
        assert q["format"] == ["pprof"] and q["spyName"] == ["perfspill"]
        assert q["name"] == ["perfspill.cpu{host=%s}" % m["host"]], q
        assert q["from"] == [str(utc_ns(m["first_sample_utc_approx"]) //
                                 10**9)], q
        ctype = headers.get("Content-Type") or headers.get("content-type")
        assert ctype.startswith("multipart/form-data; boundary="), ctype
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        parts = {pt.get_param("name", header="content-disposition"): pt
                 for pt in msg.iter_parts()}
        assert set(parts) == {"profile"}, list(parts)
        prof = parts["profile"].get_payload(decode=True)
        assert prof[:2] == b"\x1f\x8b"      # gzip
        got = os.path.join(_work, "received.pb.gz")
        with open(got, "wb") as f:
            f.write(prof)
        top = go_pprof("-top", "-sample_index=samples", got)
        assert "Total samples = %d" % m["samples"] in top, top[:400]
    finally:
        rcv.close()
    bad = subprocess.run([SHIP, path, path + ".json"], capture_output=True,
                         text=True, env=dict(env, SHIP_FORMAT="json"))
    assert bad.returncode == 2 and "SHIP_FORMAT" in bad.stderr, bad


if __name__ == "__main__":
    harness.main(globals())

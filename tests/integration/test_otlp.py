"""perfspill-flame --otlp: an OpenTelemetry ExportProfilesServiceRequest,
read by Debian's protoc --decode against the schema vendored in
tests/otlp-proto (opentelemetry-proto ac2c4b5d, profiles v1development).
Every request the tests make is decoded; the stacks of its samples, with
the comm each one's process.executable.name gives, and the number of
their timestamps equal the folded output's stacks and counts one for
one (off-CPU time: the sum of their values), for a recording of
tests/flametarget, one of the whole machine, one with cgroups, one of
the off-CPU session, and per host in a fleet store. ship-otlp.sh, the
daemon's on_finish, posts it gzipped to a local receiver's
/v1development/profiles; a refusal is a failed run that perfspilld tries
again."""
import atexit
import codecs
import collections
import gzip
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading

import harness
import test_flame
from harness import Daemon, flame, folded, manifest, wait_for

SRC = os.path.join(os.path.dirname(__file__), "..", "..")
PROTO = os.path.join(SRC, "tests", "otlp-proto")
SERVICE = "opentelemetry/proto/collector/profiles/v1development/" \
    "profiles_service.proto"
REQUEST = "opentelemetry.proto.collector.profiles.v1development." \
    "ExportProfilesServiceRequest"
SHIP = os.path.join(SRC, "conf", "ship-otlp.sh")
_work = harness.workdir("perfspill-otlp-test-")


def decode(data):
    """protoc --decode's text of a request, parsed into nested dicts of
    lists ({field: [value or dict]})."""
    protoc = shutil.which("protoc")
    if protoc is None:
        raise harness.Skip("protoc is not installed (Debian package "
                           "protobuf-compiler; scripts/deps installs it)")
    p = subprocess.run([protoc, "-I", PROTO, "--decode=" + REQUEST, SERVICE],
                       input=data, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    assert not p.stderr, p.stderr
    root = {}
    stack = [root]
    for line in p.stdout.decode().splitlines():
        t = line.strip()
        if t.endswith("{"):
            d = {}
            stack[-1].setdefault(t[:-1].strip(), []).append(d)
            stack.append(d)
        elif t == "}":
            stack.pop()
        elif t:
            k, v = t.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = codecs.escape_decode(v[1:-1].encode())[0].decode(
                    "utf-8", "replace")
            else:
                v = int(v)
            stack[-1].setdefault(k, []).append(v)
    assert len(stack) == 1
    return root


def one(d, k, default=0):
    return d.get(k, [default])[0]


def squeeze(names):
    """stackset_squeeze's rule: a run of one frame without a symbol is
    one frame."""
    out = []
    for n in names:
        if out and n == out[-1] and n.startswith("[") and n.endswith("]"):
            continue
        out.append(n)
    return out


def stacks(req, values=False, host=False):
    """{"comm;root;...;leaf": count} of every profile of the request (the
    number of timestamps, or with values the sum of the values; with
    host, "host;comm;..."), with the resources' and the samples'
    attributes checked on the way."""
    d = req["dictionary"][0]
    st = d["string_table"]
    # each table's index 0 is its zero value
    for t in ("mapping_table", "location_table", "function_table",
              "attribute_table", "stack_table", "link_table"):
        assert d[t][0] in ({}, {"trace_id": ["\0" * 16],
                                "span_id": ["\0" * 8]}), (t, d[t][0])
    assert st[0] == ""

    def attr(i):
        a = d["attribute_table"][i]
        v = a["value"][0]
        return st[one(a, "key_strindex")], v.get(
            "string_value", v.get("int_value", [None]))[0]

    def names_of(li):
        """A location's functions, the outermost first: a line each, the
        innermost first in the request (inlined ones, --inline)."""
        loc = d["location_table"][li]
        return [st[one(d["function_table"][one(ln, "function_index")],
                       "name_strindex")] for ln in reversed(loc["lines"])]

    out = collections.Counter()
    for rp in req.get("resource_profiles", []):
        ra = {one(a, "key", ""): a["value"][0]["string_value"][0]
              for a in rp["resource"][0]["attributes"]}
        assert ra["host.name"] and ra["os.type"] == "linux", ra
        for sp in rp["scope_profiles"]:
            assert one(sp["scope"][0], "name", "") == "perfspill-flame"
            for pr in sp.get("profiles", []):
                for s in pr.get("samples", []):
                    a = dict(attr(i) for i in s["attribute_indices"])
                    assert isinstance(a["process.pid"], int) and \
                        isinstance(a["thread.id"], int), a
                    locs = d["stack_table"][one(s, "stack_index")].get(
                        "location_indices", [])
                    names = squeeze([n for li in reversed(locs)
                                     for n in names_of(li)])
                    ts = s["timestamps_unix_nano"]
                    vs = s["values"]
                    assert len(ts) == len(vs) and ts, s
                    t0 = one(pr, "time_unix_nano")
                    assert all(t0 <= t <= t0 + one(pr, "duration_nano")
                               for t in ts), (t0, ts)
                    key = ";".join(([ra["host.name"]] if host else []) +
                                   [a["process.executable.name"]] + names)
                    out[key] += sum(vs) if values else len(ts)
    return out


def request(*args):
    out = os.path.join(_work, "req-%d.bin" % len(os.listdir(_work)))
    flame("-q", "--otlp", out, *args)
    with open(out, "rb") as f:
        return f.read()


def assert_same(got, want):
    assert got == want, (sorted((got - want).items())[:5],
                         sorted((want - got).items())[:5])


def test_flametarget_stacks_and_counts():
    """A recording of flametarget: the request's stacks and counts are
    the folded output's, one for one; the resource says the manifest's
    host and machine, the profile is cpu in nanoseconds (cpu-clock's
    period per timestamp), the binary's mapping its build-id."""
    path = test_flame.recording()
    req = decode(request(path))
    assert_same(stacks(req), folded(flame("-q", "-f", "-", path).stdout))
    m = manifest(path)
    rp = req["resource_profiles"]
    assert len(rp) == 1
    ra = {one(a, "key", ""): a["value"][0]["string_value"][0]
          for a in rp[0]["resource"][0]["attributes"]}
    assert ra["host.name"] == m["host"] and \
        ra["host.id"] == m["machine_id"] and \
        ra["os.version"] == m["kernel"]["release"], ra
    d = req["dictionary"][0]
    st = d["string_table"]
    pr = rp[0]["scope_profiles"][0]["profiles"]
    assert len(pr) == 1
    vt = pr[0]["sample_type"][0]
    assert (st[one(vt, "type_strindex")], st[one(vt, "unit_strindex")]) == \
        ("cpu", "nanoseconds")
    for s in pr[0]["samples"]:
        assert all(900000 <= v <= 1200000 for v in s["values"]), s
    target = os.path.realpath(test_flame.TARGET)
    bids = {b["path"]: b["build_id"] for b in m["buildids"]}
    attrs = d["attribute_table"]
    mine = [x for x in d["mapping_table"]
            if x and st[one(x, "filename_strindex")] == target]
    assert mine
    for x in mine:
        a = attrs[x["attribute_indices"][0]]
        assert st[one(a, "key_strindex")] == \
            "process.executable.build_id.gnu" and \
            a["value"][0]["string_value"][0] == bids[target], a


def test_one_resource_per_host():
    """A fleet store of two hosts' files: one resource each, named by
    the manifests, and the stacks of each the folded output's under
    --roots host,comm; --per-host writes one request per host."""
    path = test_flame.recording()
    fleet = test_flame.ship("otlp-fleet", [("alpha", path), ("beta", path)])
    req = decode(request(fleet))
    names = [a["value"][0]["string_value"][0]
             for rp in req["resource_profiles"]
             for a in rp["resource"][0]["attributes"]
             if one(a, "key", "") == "host.name"]
    assert sorted(names) == ["alpha", "beta"], names
    assert_same(stacks(req, host=True),
                folded(flame("-q", "--roots", "host,comm", "-f", "-",
                             fleet).stdout))
    out = os.path.join(_work, "per-%h.bin")
    flame("-q", "--per-host", "--otlp", out, fleet)
    for h in ("alpha", "beta"):
        with open(out.replace("%h", h), "rb") as f:
            r = decode(f.read())
        assert len(r["resource_profiles"]) == 1
        assert_same(stacks(r), folded(flame("-q", "--host", h, "-f", "-",
                                            fleet).stdout))


def test_machine_and_ranges():
    """The whole machine's file (kernel frames, 127-frame chains of
    [unknown]), deepstack's and dd's samples (another engineer's binary
    rebuilt between two reads would be named differently), whole and cut
    by a time range and to kernel frames: still the folded output's
    stacks and counts."""
    path = test_flame.machine()
    pids = ["--pid=%d" % p for p in test_flame._cache["machine pids"]]
    assert_same(stacks(decode(request(*pids, path))),
                folded(flame("-q", "-f", "-", *pids, path).stdout))
    m = manifest(path)
    a = test_flame.utc_ns(m["first_sample_utc_approx"])
    b = test_flame.utc_ns(m["last_sample_utc_approx"])
    mid = harness.iso((a + b) // 2)
    pid = str(test_flame._cache["machine pids"][1])
    args = ("--from", mid, "--pid", pid, "--kernel-only", path)
    assert_same(stacks(decode(request(*args))),
                folded(flame("-q", "-f", "-", *args).stdout))


def test_cgroups_and_containers():
    """A recording with every sample's cgroup: each sample carries
    process.linux.cgroup, the folded output's cgroup, and container.id
    where that path names one (the unit test checks the names)."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "999", "-g",
              "--all-cgroups")
        assert harness.spinner(1.0).wait() == 0
        d.ctl("stop")
        path = d.finished_files()[0]
        req = decode(request(path))
        assert_same(stacks(req), folded(flame("-q", "-f", "-",
                                              path).stdout))
        dct = req["dictionary"][0]
        st = dct["string_table"]
        cg = collections.Counter()
        for rp in req["resource_profiles"]:
            for pr in rp["scope_profiles"][0]["profiles"]:
                for s in pr["samples"]:
                    a = {}
                    for i in s["attribute_indices"]:
                        x = dct["attribute_table"][i]
                        a[st[one(x, "key_strindex")]] = \
                            x["value"][0].get("string_value", [None])[0]
                    assert "process.linux.cgroup" in a, a
                    cg[a["process.linux.cgroup"]] += len(
                        s["timestamps_unix_nano"])
        want = collections.Counter()
        for k, n in folded(flame("-q", "--roots", "cgroup", "-f", "-",
                                 path).stdout).items():
            want[k.split(";")[0]] += n
        assert cg == want, (cg, want)


def test_off_cpu_request():
    """The off-CPU session as OTLP: profile type off_cpu in nanoseconds,
    each stack's values adding up to the folded output's time."""
    import test_offcpu
    r = test_offcpu.recording()
    args = ("--off-cpu", "--pid", str(r["pid"]), r["dir"])
    req = decode(request(*args))
    assert_same(stacks(req, values=True),
                folded(flame("-q", "-f", "-", *args).stdout))
    st = req["dictionary"][0]["string_table"]
    vt = req["resource_profiles"][0]["scope_profiles"][0]["profiles"][0][
        "sample_type"][0]
    assert (st[one(vt, "type_strindex")], st[one(vt, "unit_strindex")]) == \
        ("off_cpu", "nanoseconds")


class Collector:
    """An OTLP/HTTP receiver on 127.0.0.1 keeping each POST; the first
    `fail` requests are answered `code` (503)."""

    def __init__(self, fail=0, code=503):
        self.requests = []
        self.fail = fail
        self.code = code
        me = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                me.requests.append((self.path, dict(self.headers),
                                    self.rfile.read(n)))
                if me.fail > 0:
                    me.fail -= 1
                    self.send_response(me.code)
                    self.end_headers()
                    return
                # an empty ExportProfilesServiceResponse: all accepted
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_ship_otlp_as_on_finish():
    """ship-otlp.sh as the daemon's on_finish, run as the hand-off user:
    a POST to /v1development/profiles, protobuf, gzip, whose body decodes
    to the file's stacks and counts; the Collector's first refusal fails
    the run, and perfspilld's retry sends it again."""
    rcv = Collector(fail=1)
    try:
        with Daemon(config={}, start=False) as d:
            harness.handoff_user()
            os.chmod(d.dir, 0o755)
            hook = os.path.join(d.dir, "hook")
            with open(hook, "w") as f:
                f.write("#!/bin/sh\nSHIP_OTLP=%s/ PERFSPILL_FLAME=%s "
                        "exec %s \"$@\"\n" % (rcv.url, test_flame.FLAME,
                                              os.path.abspath(SHIP)))
            os.chmod(hook, 0o755)
            with open(d.config, "w") as f:
                json.dump({"on_finish": hook, "on_finish_retry": "1"}, f)
            d.start()
            path = test_flame.record(d, 1.0)[0]
            wait_for(lambda: d.status()["handoffs"]["ok"] == 1, 120,
                     "the hand-off")
            assert len(rcv.requests) == 2, [r[0] for r in rcv.requests]
            for url, headers, body in rcv.requests:
                assert url == "/v1development/profiles", url
                assert headers["Content-Type"] == "application/x-protobuf"
                assert headers["Content-Encoding"] == "gzip", headers
            got = stacks(decode(gzip.decompress(rcv.requests[1][2])))
            # root reads the kernel's symbols; the hand-off user may not
            want = folded(flame("-q", "-f", "-", path).stdout)
            assert sum(got.values()) == sum(want.values()) == \
                manifest(path)["samples"], (sum(got.values()),
                                           sum(want.values()))
            assert {k.split(";")[0] for k in got} == \
                {k.split(";")[0] for k in want}
    finally:
        rcv.close()
    p = subprocess.run([SHIP, path], capture_output=True, text=True,
                       env=dict(os.environ, SHIP_OTLP=""))
    assert p.returncode == 1 and "SHIP_OTLP" in p.stderr, p


def test_ship_otlp_named_off_cpu_session_and_failures():
    """A file of an off-CPU session named otherwise (start --off-cpu
    --session locks: its one event every sched_switch) is shipped as
    off-CPU time, as session offcpu's is, not as a count per switch. A
    Collector that answers 500, closes the connection unanswered, or
    never answers fails the run (SHIP_TIMEOUT bounds the wait), so that
    perfspilld tries again."""
    import socket
    import test_offcpu
    r = test_offcpu.recording()
    src = r["offcpu"][0]
    work = tempfile.mkdtemp(prefix="perfspill-otlp-ship-")
    # gone when the suite's process ends, passed or failed (it was left
    # behind, one copy of an off-CPU file a run)
    atexit.register(shutil.rmtree, work, True)
    path = os.path.join(work, os.path.basename(src).replace("-offcpu-",
                                                            "-locks-"))
    shutil.copy2(src, path)
    with open(src + ".json", encoding="utf-8") as f:
        text = f.read()
    assert '"session": "offcpu",' in text
    with open(path + ".json", "w", encoding="utf-8") as f:
        f.write(text.replace('"session": "offcpu",', '"session": "locks",'))

    def ship(url, timeout="300"):
        return subprocess.run([SHIP, path], capture_output=True, text=True,
                              timeout=600, env=dict(
                                  os.environ, SHIP_OTLP=url,
                                  SHIP_TIMEOUT=timeout,
                                  PERFSPILL_FLAME=test_flame.FLAME))
    rcv = Collector(fail=1, code=500)
    try:
        p = ship(rcv.url)
        assert p.returncode != 0 and "500" in p.stderr, p
        p = ship(rcv.url)
        assert p.returncode == 0, p
        req = decode(gzip.decompress(rcv.requests[-1][2]))
    finally:
        rcv.close()
    st = req["dictionary"][0]["string_table"]
    vt = req["resource_profiles"][0]["scope_profiles"][0]["profiles"][0][
        "sample_type"][0]
    assert (st[one(vt, "type_strindex")], st[one(vt, "unit_strindex")]) == \
        ("off_cpu", "nanoseconds")
    want = folded(flame("--off-cpu", "-q", "-f", "-", path).stdout)
    assert sum(stacks(req, values=True).values()) == sum(want.values())

    # a receiver that reads the request and closes without an answer,
    # and one that never answers
    for close in (True, False):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        held = []

        def serve(srv=srv, close=close, held=held):
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.recv(65536)
            if close:
                c.close()
            else:
                held.append(c)
        t = threading.Thread(target=serve, daemon=True)
        t.start()
        p = ship("http://127.0.0.1:%d" % srv.getsockname()[1], timeout="3")
        assert p.returncode != 0 and "curl" in p.stderr, (close, p)
        srv.close()
        for c in held:
            c.close()


if __name__ == "__main__":
    harness.main(globals())

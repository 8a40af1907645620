"""The control plane: every command and error code, hostile and slow
clients, access control by peer credentials, live configure."""
import grp
import json
import os
import socket
import subprocess
import time

import harness
from harness import Daemon, perf_stats, perf_valid, wait_for, Skip


def err(reply):
    assert reply["v"] == 1 and reply["ok"] is False, reply
    return reply["error"]["code"]


def test_every_command():
    with Daemon() as d:
        assert d.request({"v": 1, "cmd": "ping"})["data"]["pong"] is True
        v = d.request({"v": 1, "cmd": "version"})["data"]
        assert v["protocol"] == 1 and v["version"]
        st = d.request({"v": 1, "cmd": "status"})["data"]
        assert st["state"] == "idle" and "config" in st
        r = d.request({"v": 1, "cmd": "configure",
                       "args": {"max_files": 7, "freq": 199}})
        assert r["ok"] and r["data"]["applied"] == ["max_files"]
        assert r["data"]["next_start"] == ["freq"]
        r = d.request({"v": 1, "cmd": "start", "args": {"cblocks": 1}})
        assert r["ok"] and r["data"]["state"] == "recording"
        assert r["data"]["settings"]["freq"] == 199
        r = d.request({"v": 1, "cmd": "rotate"})
        assert r["ok"] and r["data"]["name"].endswith(".partial")
        r = d.request({"v": 1, "cmd": "reload"})
        assert r["ok"]
        r = d.request({"v": 1, "cmd": "stop"})
        assert r["ok"] and r["data"]["path"].startswith(d.out + "/")
        assert len(d.finished_files()) == 2


def test_error_codes():
    with Daemon() as d:
        cases = [
            (b"this is not json\n", "bad-json"),
            (b'{"v":1,"cmd":"ping"} {"v":1}\n', "bad-json"),
            (b"[1,2]\n", "bad-request"),
            (b'{"cmd":"ping"}\n', "bad-request"),
            (b'{"v":"1","cmd":"ping"}\n', "bad-request"),
            (b'{"v":2,"cmd":"ping"}\n', "bad-version"),
            (b'{"v":1}\n', "bad-request"),
            (b'{"v":1,"cmd":"ping","x":1}\n', "bad-request"),
            (b'{"v":1,"cmd":"ping","args":[]}\n', "bad-request"),
            (b'{"v":1,"cmd":"fly"}\n', "unknown-command"),
            (b'{"v":1,"cmd":"ping","args":{"a":1}}\n', "unknown-key"),
            (b'{"v":1,"cmd":"configure","args":{"nope":1}}\n',
             "unknown-key"),
            (b'{"v":1,"cmd":"configure","args":{"cblocks":"3"}}\n',
             "bad-type"),
            (b'{"v":1,"cmd":"configure","args":{"cblocks":99}}\n',
             "bad-value"),
            (b'{"v":1,"cmd":"configure","args":{"mmap_pages":100}}\n',
             "bad-value"),
            (b'{"v":1,"cmd":"configure","args":{"output_dir":"/etc"}}\n',
             "not-settable"),
            (b'{"v":1,"cmd":"configure","args":{"socket":"/tmp/x"}}\n',
             "not-settable"),
            (b'{"v":1,"cmd":"stop"}\n', "wrong-state"),
            (b'{"v":1,"cmd":"start","args":{"events":["cycles"]}}\n',
             "bad-event"),
        ]
        for raw, code in cases:
            rep = json.loads(d.raw(raw))
            assert err(rep) == code, (raw, rep)
            assert rep["error"]["message"]
        # the key is named
        rep = json.loads(d.raw(b'{"v":1,"cmd":"configure","args":'
                               b'{"max_files":1,"cblocks":-1}}\n'))
        assert rep["error"]["key"] == "cblocks"
        # nothing half-applied: max_files did not change
        assert d.status()["config"]["max_files"] != 1
        assert d.alive()


def test_oversized_and_truncated():
    with Daemon() as d:
        d.ctl("start", "-F", "99")
        big = b'{"v":1,"cmd":"ping","args":{"x":"' + b"a" * 70000 + b'"}}\n'
        rep = json.loads(d.raw(big))
        assert err(rep) == "too-big"
        # truncated: the peer closes mid-message
        d.raw(b'{"v":1,"cmd":"st', read=False)
        # NUL bytes and binary garbage
        rep = json.loads(d.raw(b"\x00\xff\xfe{\n"))
        assert err(rep) == "bad-json"
        assert d.alive()
        assert d.status()["state"] == "recording"
        rc, rep = d.ctl("stop")
        perf_valid(rep["data"]["path"])


def test_hundred_clients_and_a_stalled_one():
    with Daemon(config={"client_timeout": 2, "max_clients": 200}) as d:
        d.ctl("start", "-F", "199")
        stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stalled.connect(d.sock)
        stalled.sendall(b'{"v":1,"cmd":"sta')
        socks = []
        for _ in range(100):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(20)
            s.connect(d.sock)
            socks.append(s)
        for s in socks:
            s.sendall(b'{"v":1,"cmd":"ping"}\n')
        for s in socks:
            buf = b""
            while not buf.endswith(b"\n"):
                buf += s.recv(4096)
            assert json.loads(buf)["ok"]
            s.close()
        s1 = d.status()["totals"]["samples"]
        time.sleep(1.2)
        assert d.status()["totals"]["samples"] > s1, "recording stalled"
        # the stalled client is dropped after client_timeout
        stalled.settimeout(10)
        assert stalled.recv(100) == b""
        d.ctl("stop")


def test_too_many_clients_get_busy():
    with Daemon(config={"max_clients": 3}) as d:
        held = []
        for _ in range(3):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(d.sock)
            held.append(s)
        time.sleep(0.2)
        rep = json.loads(d.raw(b'{"v":1,"cmd":"ping"}\n'))
        assert err(rep) == "busy"
        for s in held:
            s.close()
        wait_for(lambda: d.request({"v": 1, "cmd": "ping"})["ok"],
                 what="a slot after clients left")


def test_out_of_fds_backs_off():
    """With its descriptors used up the daemon stops accepting for a
    moment instead of spinning, stays up, and serves again later."""
    with Daemon(wrapper=["prlimit", "--nofile=24:24"],
                config={"max_clients": 100}) as d:
        d.ctl("start", "-F", "99")
        held = []
        for _ in range(30):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(d.sock)
            except (BlockingIOError, OSError):
                pass
            held.append(s)
        wait_for(lambda: "pausing for 1s" in d.read_log(),
                 what="the accept back-off")
        cpu0 = sum(int(x) for x in open("/proc/%d/stat" % d.proc.pid)
                   .read().rsplit(")", 1)[1].split()[11:13])
        time.sleep(1.0)
        cpu1 = sum(int(x) for x in open("/proc/%d/stat" % d.proc.pid)
                   .read().rsplit(")", 1)[1].split()[11:13])
        # not spinning: well under half a core over that second
        assert cpu1 - cpu0 < os.sysconf("SC_CLK_TCK") // 2, (cpu0, cpu1)
        for s in held:
            s.close()
        wait_for(lambda: d.request({"v": 1, "cmd": "ping"})["ok"],
                 what="service after descriptors came back")
        assert d.alive()
        rc, rep = d.ctl("stop")
        perf_valid(rep["data"]["path"])


def make_group(name):
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        r = subprocess.run(["groupadd", "-f", name])
        if r.returncode != 0:
            raise Skip("cannot create group %s" % name)
        return grp.getgrnam(name).gr_gid


def test_access_control_by_peer_credentials():
    if subprocess.run(["which", "setpriv"], capture_output=True).returncode:
        raise Skip("setpriv (util-linux) is not installed")
    readers = make_group("psreaders")
    admins = make_group("psadmins")
    with Daemon(config={"socket_group": "psreaders", "socket_mode": "0660",
                        "control_groups": ["psadmins"]}) as d:
        os.chmod(d.dir, 0o755)
        st = os.stat(d.sock)
        assert st.st_gid == readers and st.st_mode & 0o777 == 0o660
        nobody = ("65534", "65534")
        # no group: cannot even connect
        rc, rep = d.ctl("status", check=False, user=nobody)
        assert rc == 3, (rc, rep)
        # socket group: may read, may not change
        reader = ("65534", "65534", str(readers))
        rc, rep = d.ctl("status", user=reader)
        assert rep["ok"]
        for cmd in (["start"], ["stop"], ["configure", "max_files=3"],
                    ["rotate"], ["reload"]):
            rc, rep = d.ctl(*cmd, check=False, user=reader)
            assert rc == 1 and err(rep) == "permission-denied", (cmd, rep)
        assert d.status()["state"] == "idle"
        # a control group member may change things
        admin = ("65534", "65534", "%d,%d" % (readers, admins))
        rc, rep = d.ctl("start", "-F", "99", user=admin)
        assert rep["ok"]
        rc, rep = d.ctl("stop", user=admin)
        assert rep["ok"]


def test_no_path_outside_output_dir():
    with Daemon() as d:
        for key, val in (("output_dir", "/etc"), ("socket", "/tmp/s")):
            rep = d.request({"v": 1, "cmd": "start", "args": {key: val}})
            assert err(rep) == "not-settable"
        rep = d.request({"v": 1, "cmd": "start",
                         "args": {"events": ["../../etc:passwd"]}})
        assert err(rep) in ("bad-value", "bad-event")
        rep = d.request({"v": 1, "cmd": "start",
                         "args": {"events": ["sched:../../x"]}})
        assert err(rep) in ("bad-value", "bad-event")
        # nothing but the daemon's lock on the directory
        assert os.listdir(d.out) == [".perfspilld.lock"], os.listdir(d.out)


def test_configure_cblocks_live_loses_nothing():
    with Daemon() as d:
        d.ctl("start", "-F", "997", "--cblocks", "1")
        for n in (4, 0, 2, 8, 1):
            sp = harness.spinner(0.3)
            sp.wait()
            rc, rep = d.ctl("configure", "cblocks=%d" % n)
            assert rep["data"]["applied"] == ["cblocks"]
            assert d.status()["settings"]["cblocks"] == n
        rc, rep = d.ctl("stop")
        counts, e = perf_stats(rep["data"]["path"])
        harness.assert_perf_clean(e, "stats")
        assert counts["SAMPLE"] == rep["data"]["totals"]["samples"]
        assert rep["data"]["totals"]["lost"] == 0
        assert rep["data"]["totals"]["bytes_dropped"] == 0


def test_client_help_and_usage_errors():
    ctl = harness.PERFSPILLCTL
    p = subprocess.run([ctl, "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "start" in p.stdout
    for cmd in ("status", "start", "stop", "rotate", "configure", "reload",
                "ping", "version"):
        p = subprocess.run([ctl, cmd, "--help"], capture_output=True,
                           text=True)
        assert p.returncode == 0 and "perfspillctl " in p.stdout, cmd
    p = subprocess.run([ctl, "configure", "--help"], capture_output=True,
                       text=True)
    assert "KEY=VALUE" in p.stdout and "next start" in p.stdout
    p = subprocess.run([ctl, "frobnicate"], capture_output=True, text=True)
    assert p.returncode == 2
    p = subprocess.run([ctl, "configure", "novalue"], capture_output=True,
                       text=True)
    assert p.returncode == 2
    p = subprocess.run([ctl, "start", "--bogus"], capture_output=True,
                       text=True)
    assert p.returncode == 2


def test_status_human_and_watch():
    with Daemon() as d:
        d.ctl("start", "-F", "99")
        env = dict(os.environ, PERFSPILL_SOCKET=d.sock)
        p = subprocess.run([harness.PERFSPILLCTL, "status"], env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0
        for word in ("state:", "recording", "samples:", "lost:", "CPU"):
            assert word in p.stdout, p.stdout
        w = subprocess.Popen([harness.PERFSPILLCTL, "status", "--watch",
                              "0.2"], env=env, stdout=subprocess.PIPE)
        time.sleep(1.0)
        w.terminate()
        out = w.communicate()[0].decode()
        assert out.count("state:") >= 2
        d.ctl("stop")


if __name__ == "__main__":
    harness.main(globals())

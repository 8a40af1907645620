"""Named sessions: an on-demand recording beside the default one, each with
its own rings and files; the limits that refuse a start (max_sessions, the
memory budget, a cgroup's memory limit) before anything is allocated; one
retention across sessions, by time; what a refused start leaves behind."""
import json
import os
import re
import signal
import socket
import subprocess
import time

import harness
from cgroupfs import MemoryCgroup
from harness import Daemon, Skip, need_tp, perf, perf_valid, wait_for

HOST = socket.gethostname()


def samples_by_cpu(path):
    """{cpu: [sample times in seconds]} of a file, as perf script reads it."""
    out = perf("script", "-F", "cpu,time", "-i", path).stdout
    by = {}
    for line in out.splitlines():
        m = re.match(r"\s*\[(\d+)\]\s+([\d.]+):", line)
        if m:
            by.setdefault(int(m.group(1)), []).append(float(m.group(2)))
    return by


def manifest(path):
    with open(path + ".json") as f:
        return json.load(f)


def files_of(d, session=None):
    """Finished files of the default session (None) or of session."""
    stem = "perfspill-%s-" % HOST if session is None else \
        "perfspill-%s-%s-" % (HOST, session)
    pat = re.compile(re.escape(stem) + r"\d{8}T\d{6}Z-\d{6}\.data$")
    return [f for f in d.finished_files() if pat.match(os.path.basename(f))]


def session_entry(st, name):
    for s in st.get("sessions", []):
        if s["name"] == name:
            return s
    return None


def spin_both_cpus(secs):
    """A spinner per CPU, so that cpu-clock has something to sample on
    each CPU at every period (an idle CPU gives no cpu-clock samples)."""
    sps = [harness.spinner(secs) for _ in range(os.cpu_count() or 2)]
    for sp in sps:
        assert sp.stdout.readline().strip() == b"ready"
    return sps


def stop_all(sps):
    for sp in sps:
        sp.send_signal(signal.SIGTERM)
        sp.wait()


def test_burst_beside_the_default_leaves_it_whole():
    """The default session records on while a burst session starts, runs
    and ends beside it: one recording, no rotation, no gap in its sample
    times across the burst, no loss; the burst's files are its own."""
    cfg = {"rotate_size": 0, "rotate_interval": 0, "max_files": 0,
           "max_size": 0, "min_free": 0}
    with Daemon(config=cfg) as d:
        sps = spin_both_cpus(600)
        try:
            # 2 CPUs: 1k samples/s by default, 2k by the burst: under 5k
            d.ctl("start", "-e", "cpu-clock", "-F", "499")
            before = d.status()
            time.sleep(1)
            rc, rep = d.ctl("start", "--session", "burst", "--duration",
                            "3s", "-F", "999", "-m", "64", "--cblocks", "1")
            assert rep["data"]["session"] == "burst"
            assert re.match(r"perfspill-%s-burst-\d{8}T\d{6}Z-\d{6}\.data"
                            r"\.partial$" % re.escape(HOST),
                            rep["data"]["file"]["name"]), rep
            b = rep["data"]
            assert b["state"] == "recording" and b["duration"] == 3, b
            # its own settings, the default's unchanged
            assert b["settings"]["freq"] == 999
            assert b["settings"]["mmap_pages"] == 64
            st = d.status()
            assert st["settings"]["freq"] == 499
            assert session_entry(st, "default")["memory"]["total"] > 0
            # it ends by itself
            wait_for(lambda: session_entry(d.status(), "burst") is None,
                     timeout=60, what="the burst session to end")
            time.sleep(1)
            after = d.status()
            rc, stop = d.ctl("stop")
        finally:
            stop_all(sps)
        # the default recorded all along: the same recording, one file
        assert after["started"] == before["started"]
        assert after["state"] == "recording"
        assert stop["data"]["totals"]["lost"] == 0, stop
        assert stop["data"]["totals"]["lost_samples"] == 0, stop
        dfl = files_of(d)
        burst = files_of(d, "burst")
        assert len(dfl) == 1, d.finished_files()
        assert len(burst) == 1, d.finished_files()
        assert len(d.finished_files()) == 2, d.finished_files()
        # perf reads both; no LOST in either (perf_valid checks)
        perf_valid(dfl[0])
        perf_valid(burst[0])
        assert manifest(dfl[0])["session"] == "default"
        m = manifest(burst[0])
        assert m["session"] == "burst"
        assert m["settings"]["freq"] == 999
        # the default's samples run on through the burst on every CPU:
        # no stretch of the burst without them (a stop and a start of
        # the default would leave one)
        db = samples_by_cpu(dfl[0])
        bb = samples_by_cpu(burst[0])
        first = min(min(t) for t in bb.values())
        last = max(max(t) for t in bb.values())
        assert last - first > 1.0, (first, last)
        for cpu, times in db.items():
            assert times[0] < first and times[-1] > last, (cpu, first, last)
            inside = [t for t in times if first - 1 <= t <= last + 1]
            gap = max(b - a for a, b in zip(inside, inside[1:]))
            # 2 ms periods; a second is 500 of them: a gap is a stop
            assert gap < 1.0, (cpu, gap)


def test_duration_and_the_default_bound_end_a_session():
    """--duration ends a session by itself; a session started without one
    ends after session_duration, so a forgotten one does not run on."""
    with Daemon(config={"session_duration": 2}) as d:
        rc, rep = d.ctl("start", "--session", "forgot", "-F", "99", "-m",
                        "16")
        assert rep["data"]["duration"] == 2, rep
        t0 = time.time()
        rc, rep = d.ctl("start", "--session", "short", "--duration", "1",
                        "-F", "99", "-m", "16")
        assert rep["data"]["duration"] == 1, rep
        assert t0 <= rep["data"]["ends"] <= time.time() + 1, rep
        wait_for(lambda: session_entry(d.status(), "forgot") is None and
                 session_entry(d.status(), "short") is None, timeout=60,
                 what="both sessions to end by themselves")
        assert len(files_of(d, "forgot")) == 1, d.finished_files()
        assert len(files_of(d, "short")) == 1, d.finished_files()
        # the default session never recorded
        assert d.status()["state"] == "idle"
        assert "ended" in d.read_log()
        # a duration beyond a week, or none at all, is refused
        rc, rep = d.ctl("start", "--session", "x", "--duration", "8d",
                        check=False)
        assert rc == 1 and rep["error"]["key"] == "duration", rep
        rc, rep = d.ctl("start", "--duration", "5", check=False)
        assert rc == 1 and rep["error"]["key"] == "duration", rep


def test_stop_and_rotate_a_session_by_name():
    with Daemon(config={"max_sessions": 1}) as d:
        d.ctl("start", "-F", "99")
        d.ctl("start", "--session", "deep", "-F", "199", "-m", "16")
        rc, rep = d.ctl("rotate", "--session", "deep")
        assert "-deep-" in rep["data"]["finished"], rep
        assert "-deep-" in rep["data"]["name"], rep
        rc, rep = d.ctl("stop", "--session", "deep")
        assert rep["data"]["session"] == "deep"
        assert "-deep-" in rep["data"]["file"], rep
        assert len(files_of(d, "deep")) == 2, d.finished_files()
        # the default one records on
        assert d.status()["state"] == "recording"
        assert files_of(d) == []
        rc, rep = d.ctl("stop", "--session", "deep", check=False)
        assert rc == 1 and rep["error"]["code"] == "wrong-state", rep
        d.ctl("stop")
        assert len(files_of(d)) == 1


def test_max_sessions_refuses_with_the_figures():
    with Daemon(config={"max_sessions": 1}) as d:
        d.ctl("start", "--session", "one", "-F", "99", "-m", "16")
        rc, rep = d.ctl("start", "--session", "two", "-F", "99", "-m", "16",
                        check=False)
        assert rc == 1, rep
        err = rep["error"]
        assert err["code"] == "limit", err
        assert "max_sessions is 1" in err["message"], err
        assert "1 on-demand session" in err["message"], err
        # the default session is not one of them
        d.ctl("start", "-F", "99")
        d.ctl("stop", "--session", "one")
        d.ctl("start", "--session", "two", "-F", "99", "-m", "16")
        d.ctl("stop", "--session", "two")
        d.ctl("stop")
        assert d.alive()


def test_memory_budget_refuses_with_the_figures():
    """max_memory bounds what every session holds together: a start that
    would go over it is refused, naming what it would hold, what the
    others hold and the budget, and nothing of it is allocated."""
    with Daemon(config={"max_memory": "32M"}) as d:
        # 19.8 MiB at 4K pages: 2 rings, the pool at its bound (16
        # blocks) and the per-CPU cblocks a buffered file would make,
        # the copy
        d.ctl("start", "-m", "128", "--cblocks", "2")
        held = d.status()["memory"]["held"]
        assert held == session_entry(d.status(), "default")["memory"]["total"]
        rc, rep = d.ctl("start", "--session", "big", "-m", "256",
                        "--cblocks", "2", check=False)
        assert rc == 1, rep
        err = rep["error"]
        assert err["code"] == "limit", err
        msg = err["message"]
        assert "would hold" in msg and "memory budget is 32.0 MiB" in msg, msg
        assert "max_memory" in msg, msg
        assert re.search(r"sessions recording hold \d", msg), msg
        st = d.status()
        assert session_entry(st, "big") is None
        assert st["memory"]["held"] == held
        assert st["memory"]["budget"] == 32 << 20
        # a small one fits beside it
        d.ctl("start", "--session", "small", "-m", "8", "--cblocks", "1")
        # and so does the default's cblocks change only within the budget
        rc, rep = d.ctl("configure", "cblocks=8", check=False)
        assert rc == 1 and rep["error"]["code"] == "limit", rep
        assert d.status()["settings"]["cblocks"] == 2
        d.ctl("stop", "--session", "small")
        d.ctl("stop")


def test_a_start_over_the_cgroup_memory_limit_is_refused():
    """In a 1 GiB memory cgroup, -m 65536 --cblocks 8 would hold 12.8 GiB:
    it used to get the daemon OOM-killed; now it is refused with the
    figures and the daemon records on."""
    with MemoryCgroup(1 << 30) as cg:
        with Daemon(wrapper=cg.wrapper()) as d:
            rc, rep = d.ctl("start", "-e", "cpu-clock", "-m", "65536",
                            "--cblocks", "8", check=False)
            assert d.alive(), d.proc.returncode
            assert rc == 1, rep
            err = rep["error"]
            assert err["code"] == "limit", err
            assert "would hold 12.8 GiB" in err["message"], err
            assert "memory budget is 960.0 MiB" in err["message"], err
            assert cg.knob in err["message"], err
            assert d.alive()
            d.ctl("ping")
            st = d.status()
            assert st["memory"]["limit"] == 1 << 30, st["memory"]
            assert st["memory"]["budget"] == (1 << 30) - (64 << 20)
            assert cg.knob in st["memory"]["budget_from"], st["memory"]
            # the same for an on-demand session
            rc, rep = d.ctl("start", "--session", "big", "-m", "65536",
                            "--cblocks", "8", check=False)
            assert rc == 1 and rep["error"]["code"] == "limit", rep
            # what fits records
            d.ctl("start", "-F", "99")
            sp = harness.spinner(0.5)
            sp.wait()
            d.ctl("stop")
            assert len(d.finished_files()) == 1
            assert d.alive()


def vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


def test_a_refused_start_gives_its_memory_back():
    """A start the kernel refuses (a ring over the lock limit, without
    CAP_IPC_LOCK) used to keep the drain's ring-sized copy buffer: 128 MiB
    resident here. What a refused start allocated is released."""
    env = None
    if harness.SANITIZED:
        # ASan keeps freed memory in its quarantine: look at ours
        env = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
               ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"}
    with Daemon(wrapper=["setpriv", "--bounding-set=-ipc_lock"],
                env=env) as d:
        with open("/proc/%d/status" % d.proc.pid) as f:
            caps = [l for l in f if l.startswith("CapEff:")][0]
        if int(caps.split()[1], 16) & (1 << 14):
            raise Skip("cannot drop CAP_IPC_LOCK here")
        d.ctl("ping")
        before = vm_rss(d.proc.pid)
        rc, rep = d.ctl("start", "-m", "32768", "--cblocks", "0",
                        check=False)
        if rc == 0:
            raise Skip("a 128 MiB ring maps without CAP_IPC_LOCK here "
                       "(kernel.perf_event_paranoid -1?)")
        assert rep["error"]["key"] == "mmap_pages", rep
        after = vm_rss(d.proc.pid)
        assert after - before < 1 << 20, (before, after)
        assert d.alive()


def test_retention_across_sessions_goes_by_time():
    """One disk budget for every session, oldest first by the time the
    names carry: a session whose name sorts first ("0deep") does not lose
    its newer file before the default session's older ones."""
    with Daemon(config={"rotate_size": 0, "rotate_interval": 0,
                        "max_files": 0, "max_size": 0, "min_free": 0}) as d:
        d.ctl("start", "-F", "99")
        d.ctl("rotate")
        time.sleep(1.1)
        d.ctl("rotate")
        old = files_of(d)
        assert len(old) == 2, d.finished_files()
        time.sleep(1.1)
        d.ctl("start", "--session", "0deep", "-F", "99", "-m", "16")
        d.ctl("stop", "--session", "0deep")
        deep = files_of(d, "0deep")
        assert len(deep) == 1, d.finished_files()
        time.sleep(1.1)
        # the next finished file brings retention to max_files 2
        d.ctl("configure", "max_files=2")
        rc, rep = d.ctl("rotate")
        left = d.finished_files()
        assert len(left) == 2, left
        assert deep[0] in left, (deep, left)
        assert rep["data"]["finished_path"] in left, (rep, left)
        for f in old:
            assert f not in left and not os.path.exists(f + ".json"), left
        assert "retention: removed" in d.read_log()
        d.ctl("stop")


def test_session_names_are_checked():
    with Daemon() as d:
        for bad in ["../x", "a/b", "Deep", "", "x" * 33, "-x", "a b",
                    "d\u00e9ep"]:
            rc, rep = d.ctl("start", "--session", bad, "-F", "99",
                            check=False)
            assert rc == 1, (bad, rep)
            assert rep["error"]["code"] == "bad-value", (bad, rep)
            assert rep["error"]["key"] == "session", (bad, rep)
        # a name perfspill-flame's --session gives a meaning of its own
        rc, rep = d.ctl("start", "--session", "all", "-F", "99", check=False)
        assert rc == 1 and rep["error"]["code"] == "bad-value", rep
        assert "reserved" in rep["error"]["message"], rep
        assert not any("-all-" in f for f in os.listdir(d.out)), \
            os.listdir(d.out)
        # settings that are the daemon's, one for every session
        for opt in (["--max-files", "3"], ["--min-free", "1G"],
                    ["--realtime", "1"]):
            rc, rep = d.ctl("start", "--session", "ok", *opt, check=False)
            assert rc == 1 and rep["error"]["code"] == "not-settable", rep
        # "default" is the configured session
        rc, rep = d.ctl("start", "--session", "default", "-F", "99")
        assert rep["data"]["session"] == "default"
        assert d.status()["state"] == "recording"
        rc, rep = d.ctl("stop", "--session", "nosuch", check=False)
        assert rc == 1 and rep["error"]["key"] == "session", rep
        d.ctl("stop", "--session", "default")
        assert os.listdir(d.dir) != []
        assert all(f.startswith("perfspill-%s-2" % HOST) or
                   f.startswith(".") for f in os.listdir(d.out)), \
            os.listdir(d.out)
        assert d.alive()


def test_a_session_has_its_metrics_and_hand_off():
    """A session's files are handed off with PERFSPILL_SESSION; metrics
    label its series with its name, and the daemon's totals keep its
    counts once it has ended."""
    hook_dir = os.path.join("/tmp", "perfspill-session-hook-%d" % os.getpid())
    os.makedirs(hook_dir, exist_ok=True)
    os.chmod(hook_dir, 0o777)
    hook = os.path.join(hook_dir, "hook.sh")
    with open(hook, "w") as f:
        # whole once it has its name: written aside, then renamed
        f.write('#!/bin/sh\nenv | grep ^PERFSPILL_ > "%s/$PERFSPILL_NAME.tmp"'
                ' && mv "%s/$PERFSPILL_NAME.tmp" "%s/$PERFSPILL_NAME.env"\n'
                % (hook_dir, hook_dir, hook_dir))
    os.chmod(hook, 0o755)
    try:
        with Daemon(config={"on_finish": hook}) as d:
            d.ctl("start", "--session", "deep", "-F", "499", "-m", "16")
            sp = harness.spinner(0.5)
            sp.wait()
            text = harness_metrics(d)
            assert 'perfspill_session_recording{session="deep"} 1' in text
            assert re.search(r'perfspill_session_memory_bytes\{session='
                             r'"deep"\} [1-9]', text), text
            rc, rep = d.ctl("stop", "--session", "deep")
            samples = rep["data"]["totals"]["samples"]
            assert samples > 0
            name = rep["data"]["file"]
            env_file = os.path.join(hook_dir, name + ".env")
            wait_for(lambda: os.path.exists(env_file), timeout=60,
                     what="the hand-off")
            with open(env_file) as f:
                env = f.read()
            assert "PERFSPILL_SESSION=deep\n" in env, env
            text = harness_metrics(d)
            assert 'session="deep"' not in text
            m = re.search(r"^perfspill_samples_total (\d+)$", text, re.M)
            assert m and int(m.group(1)) == samples, text
    finally:
        for f in os.listdir(hook_dir):
            os.unlink(os.path.join(hook_dir, f))
        os.rmdir(hook_dir)


def harness_metrics(d):
    rc, rep = d.ctl("metrics")
    return rep["data"]["text"]


def ctl_text(d, *args):
    """perfspillctl ARGS as a person runs it (no --json)."""
    return subprocess.run([harness.PERFSPILLCTL, "-s", d.sock] + list(args),
                          capture_output=True, text=True, timeout=120)


def test_an_on_demand_flight_session_is_written_and_says_so():
    """A flight session beside the default one: snapshot --session takes
    its window into a file of its own name, a plain snapshot names it,
    rotate points to it, SIGUSR2 snapshots it (and rotates the default),
    and its stop writes the window as a last snapshot, as perf record
    --overwrite writes its buffer at exit, unless --discard."""
    sps = spin_both_cpus(120)
    try:
        with Daemon(config={"record_on_start": True, "freq": 99,
                            "snapshot_interval": 1}) as d:
            d.ctl("start", "--session", "fl", "--mode", "flight",
                  "--window", "30s", "-F", "199", "-m", "16")
            wait_for(lambda: session_entry(d.status(), "fl")["totals"]
                     ["samples"] > 50, what="samples in fl's window")
            # the default session is continuous: the answer names fl
            rc, rep = d.ctl("snapshot", check=False)
            assert rc == 1 and rep["error"]["code"] == "wrong-state", rep
            assert "snapshot --session fl" in rep["error"]["message"], rep
            rc, rep = d.ctl("snapshot", "--session", "fl")
            snap = rep["data"]["finished_path"]
            assert rep["data"]["session"] == "fl" and \
                rep["data"]["finished_whole"], rep
            assert snap in files_of(d, "fl"), (snap, d.finished_files())
            m = manifest(snap)
            assert m["session"] == "fl" and \
                m["snapshot_trigger"] == "command", m
            assert perf_valid(snap, allow_lost=True) > 0
            rc, rep = d.ctl("rotate", "--session", "fl", check=False)
            assert rc == 1 and "snapshot --session fl" in \
                rep["error"]["message"], rep
            # SIGUSR2: every session switches its output, and says so
            time.sleep(1.1)
            d.proc.send_signal(signal.SIGUSR2)
            wait_for(lambda: len(files_of(d, "fl")) == 2 and
                     len(files_of(d)) == 1, what="SIGUSR2's files")
            sig = [f for f in files_of(d, "fl") if f != snap][0]
            wait_for(lambda: os.path.exists(sig + ".json"),
                     what="its manifest")
            assert manifest(sig)["snapshot_trigger"] == "SIGUSR2"
            log = d.read_log()
            assert "SIGUSR2: session fl: snapshot, writing " + \
                os.path.basename(sig) in log, log
            assert "SIGUSR2: session default: rotated" in log, log
            # its stop writes the window, the reply says so
            rc, rep = d.ctl("stop", "--session", "fl")
            assert rep["data"]["window"] == "written", rep
            last = rep["data"]["path"]
            assert last in files_of(d, "fl") and last not in (snap, sig)
            assert manifest(last)["snapshot_trigger"] == "stop"
            assert perf_valid(last, allow_lost=True) > 0
            # the same through the words a person reads, and --discard
            d.ctl("start", "--session", "fl", "--mode", "flight",
                  "-F", "199", "-m", "16")
            wait_for(lambda: session_entry(d.status(), "fl")["flight"]
                     ["bytes"] > 0, what="fl's window")
            p = ctl_text(d, "stop", "--session", "fl", "--discard")
            assert p.returncode == 0, p.stderr
            assert "window was discarded" in p.stdout, p.stdout
            assert len(files_of(d, "fl")) == 3, d.finished_files()
            d.ctl("start", "--session", "fl", "--mode", "flight",
                  "-F", "199", "-m", "16")
            wait_for(lambda: session_entry(d.status(), "fl")["flight"]
                     ["bytes"] > 0, what="fl's window")
            p = ctl_text(d, "stop", "--session", "fl")
            assert p.returncode == 0, p.stderr
            assert "window was written" in p.stdout and "-fl-" in \
                p.stdout, p.stdout
            assert len(files_of(d, "fl")) == 4, d.finished_files()
            # a session whose duration is over is stopped: the same
            d.ctl("start", "--session", "fl", "--mode", "flight",
                  "--duration", "2s", "-F", "199", "-m", "16")
            wait_for(lambda: session_entry(d.status(), "fl") is None,
                     what="fl's end")
            wait_for(lambda: len(files_of(d, "fl")) == 5,
                     what="the window at its end")
            ends = sorted(files_of(d, "fl"), key=os.path.getmtime)[-1]
            wait_for(lambda: os.path.exists(ends + ".json"),
                     what="its manifest")
            assert manifest(ends)["snapshot_trigger"] == "stop"
            # a continuous recording has no window to discard
            rc, rep = d.ctl("stop", "--discard", check=False)
            assert rc == 1 and rep["error"]["key"] == "discard", rep
            assert d.status()["state"] == "recording"
            d.ctl("stop")
    finally:
        stop_all(sps)


def test_a_reload_over_the_memory_budget_is_refused_whole():
    """reload (and SIGHUP) is held to the budget configure cblocks= is:
    a config file whose cblocks would make the recording in progress hold
    more than max_memory is refused whole, the settings in force kept,
    with a log line and the figures in the reply."""
    cfg = {"max_memory": "32M", "record_on_start": True, "freq": 99,
           "mmap_pages": 128, "cblocks": 2, "max_files": 50}
    with Daemon(config=cfg) as d:
        held = d.status()["memory"]["held"]
        assert held <= 32 << 20, held
        with open(d.config, "w") as f:
            json.dump(dict(cfg, cblocks=8, max_files=7), f)
        rc, rep = d.ctl("reload", check=False)
        assert rc == 1 and rep["error"]["code"] == "limit", rep
        msg = rep["error"]["message"]
        assert "memory budget is 32.0 MiB" in msg and "max_memory" in msg, \
            msg
        st = d.status()
        assert st["config"]["cblocks"] == 2 and \
            st["settings"]["cblocks"] == 2, (st["config"], st["settings"])
        # refused whole: the key that would fit did not apply either
        assert st["config"]["max_files"] == 50, st["config"]
        assert st["memory"]["held"] == held, st["memory"]
        assert d.read_log().count("reload refused, settings unchanged") \
            == 1
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: d.read_log().count(
            "reload refused, settings unchanged") == 2,
            what="SIGHUP's refusal in the log")
        refusals = [l for l in d.read_log().splitlines()
                    if "reload refused" in l]
        assert "memory budget is 32.0 MiB" in refusals[-1], refusals
        st = d.status()
        assert st["settings"]["cblocks"] == 2 and \
            st["config"]["max_files"] == 50, st["config"]
        # one that fits is taken, live keys at once
        with open(d.config, "w") as f:
            json.dump(dict(cfg, cblocks=1, max_files=7), f)
        d.ctl("reload")
        st = d.status()
        assert st["settings"]["cblocks"] == 1 and \
            st["config"]["max_files"] == 7, st["config"]
        d.ctl("stop")


def test_a_burst_of_snapshots_leaves_the_history():
    """A script's burst of snapshots through perfspillctl gets one
    snapshot per snapshot_interval, the rest refused with limit: the
    default session's older files, which retention (max_files) would
    remove to make room for a burst's windows, stay."""
    with Daemon(config={"record_on_start": True, "freq": 99,
                        "rotate_size": 0, "rotate_interval": 0,
                        "max_files": 6, "max_size": 0, "min_free": 0,
                        "snapshot_interval": "1h"}) as d:
        for _ in range(3):
            time.sleep(1.1)
            d.ctl("rotate")
        old = files_of(d)
        assert len(old) == 3, d.finished_files()
        d.ctl("start", "--session", "fl", "--mode", "flight", "-F", "99",
              "-m", "16")
        ok = refused = 0
        for _ in range(20):
            rc, rep = d.ctl("snapshot", "--session", "fl", check=False)
            if rc == 0:
                ok += 1
                continue
            assert rep["error"]["code"] == "limit", rep
            assert rep["error"]["key"] == "snapshot_interval", rep
            assert "ask again in" in rep["error"]["message"], rep
            refused += 1
        assert ok == 1 and refused == 19, (ok, refused)
        # SIGUSR2 is held to it too, and says why in the log
        d.proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: "SIGUSR2: session fl: no snapshot: the last "
                 "snapshot was" in d.read_log(), what="SIGUSR2's refusal")
        for f in old:
            assert os.path.exists(f) and os.path.exists(f + ".json"), \
                (f, d.finished_files())
        assert "retention: removed" not in d.read_log()
        assert session_entry(d.status(), "fl")["flight"]["snapshots"] == 1
        # the bound is the daemon's, as retention is: a session cannot
        # lift it for itself; configure changes it for every session
        rc, rep = d.ctl("start", "--session", "fl2", "--mode", "flight",
                        "--snapshot-interval", "0", check=False)
        assert rc == 1 and rep["error"]["code"] == "not-settable", rep
        d.ctl("configure", "snapshot_interval=0")
        d.ctl("snapshot", "--session", "fl")
        assert session_entry(d.status(), "fl")["flight"]["snapshots"] == 2
        d.ctl("stop", "--session", "fl", "--discard")
        d.ctl("stop")


def test_status_by_session_and_the_lost_headline():
    """status --session NAME shows that session's recording; the text's
    lost line adds up every session's losses and names the sessions that
    lost (a burst session on a one-page ring under a syscall storm, beside
    the default one), as the JSON's sessions say; an unknown session is
    refused."""
    need_tp()
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99")
        d.ctl("start", "--session", "burst", "--duration", "5m", "-e",
              "raw_syscalls:sys_enter", "-m", "1", "--cblocks", "1")
        p = subprocess.Popen([os.path.join(harness.BUILD, "tests",
                                           "taskstorm"), "2", "2"],
                             stdout=subprocess.PIPE)
        p.wait()
        rc, rep = d.ctl("status", "--session", "burst")
        assert rep["data"]["session"] == "burst", rep["data"].get("session")
        mine = rep["data"]["totals"]
        byname = {s["name"]: s["totals"] for s in rep["data"]["sessions"]}
        p = ctl_text(d, "status")
        assert p.returncode == 0, p.stderr
        text = p.stdout
        lost = [l for l in text.splitlines() if l.startswith("lost:")]
        assert len(lost) == 1, text
        # the JSON a moment before: the counts only grow, the names stay
        ev = sum(t["lost"] for t in byname.values())
        smp = sum(t["lost_samples"] for t in byname.values())
        m = re.match(r"lost: +(\d+) events, (\d+) samples in 2 sessions"
                     r"(?: \((.*)\))?$", lost[0])
        assert m, lost[0]
        assert int(m.group(1)) >= ev and int(m.group(2)) >= smp, (lost, ev)
        named = dict(x.rsplit(" ", 1) for x in m.group(3).split(", ")) \
            if m.group(3) else {}
        want = {n for n, t in byname.items()
                if t["lost"] + t["lost_samples"] > 0}
        assert want <= set(named), (named, want)
        after = text.splitlines()[text.splitlines().index(lost[0]) + 1]
        assert after.strip().startswith("default: "), after
        print("burst lost %d events, %d samples; headline: %s" % (
            mine["lost"], mine["lost_samples"], lost[0]))
        p = ctl_text(d, "status", "--session", "burst")
        text = p.stdout
        assert p.returncode == 0 and text.startswith("session:    burst\n"), \
            text
        assert re.search(r"^ +burst: \d+ events", text, re.M), text
        p = ctl_text(d, "status", "--session", "nope")
        assert p.returncode == 1 and "no session nope" in p.stderr, p
        d.ctl("stop", "--session", "burst")
        d.ctl("stop")


if __name__ == "__main__":
    harness.main(globals())

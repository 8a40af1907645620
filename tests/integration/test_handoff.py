"""Hand-off of finished files and their manifests (issue 14 items 1, 2).

on_finish runs a program for each finished file: conf/ship-example.sh
uploads to a receiver on 127.0.0.1 here (a small HTTP server taking PUT).
The manifests are checked against the stock perf's view of each file.

PID 1 is not systemd here: the daemon runs the program itself, as
on_finish_user (perfspill-handoff, made from units/perfspill.sysusers.conf
when missing), its output read into the log. The same hand-offs through
perfspill-handoff@.service are tests/systemd/'s."""
import glob
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile

import harness
from harness import Daemon, Receiver, perf, wait_for

SRC = os.path.join(os.path.dirname(__file__), "..", "..")
SHIP = os.path.abspath(os.path.join(SRC, "conf", "ship-example.sh"))


def work(d):
    """A directory the hand-off user may run scripts from and write in
    (the daemon's own is root's)."""
    w = os.path.join(d.dir, "work")
    if not os.path.isdir(w):
        harness.handoff_user()
        os.chmod(d.dir, 0o755)
        os.mkdir(w)
        os.chmod(w, 0o1777)
    return w


def script(d, name, body):
    """An executable sh script in the daemon's private directory."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def config(hook, **kw):
    c = {"on_finish": hook, "on_finish_retry": "1", "freq": 99,
         "callgraph": False}
    c.update(kw)
    return c


def start_with(d, hook, **kw):
    """Start d (made with start=False) with hook as on_finish and kw on
    top of config()."""
    with open(d.config, "w") as f:
        json.dump(config(hook, **kw), f)
    d.start()


def handoffs(d):
    return d.status()["handoffs"]


def files_of(d, n):
    """Record into n files: n-1 rotations, then stop."""
    d.ctl("start")
    p = harness.spinner(1)
    for _ in range(n - 1):
        p.wait()
        d.ctl("rotate")
        p = harness.spinner(1)
    p.wait()
    d.ctl("stop")
    return d.finished_files()


def crash_while_recording(d):
    """kill -9 the daemon while its file holds samples: a .partial left."""
    d.ctl("start")
    harness.spinner(1.0).wait()
    wait_for(lambda: d.status()["file"]["samples"] > 0, 30,
             "samples in the file")
    d.proc.kill()
    d.proc.wait()
    os.unlink(d.sock)


def ship_through_ship_example(d, n):
    """Record n files into d (made with start=False) with ship-example.sh
    as on_finish uploading to a local receiver; every file and manifest
    must arrive byte for byte. Returns the files."""
    root = os.path.join(d.dir, "received")
    rcv = Receiver(root)
    try:
        ship = os.path.join(work(d), "ship-example.sh")
        shutil.copy(SHIP, ship)
        hook = script(work(d), "hook", "SHIP_URL=%s exec %s \"$@\"\n" % (
            rcv.url, ship))
        start_with(d, hook)
        files = files_of(d, n)
        assert len(files) == n, files
        wait_for(lambda: handoffs(d)["ok"] == n, 120, "%d hand-offs" % n)
        h = handoffs(d)
        assert h["failed"] == 0 and h["running"] == 0 and \
            h["queued"] == 0, h
        harness.assert_received(files, os.path.join(root, "up",
                                                     socket.gethostname()))
        for path in files:
            check_manifest(path)
        assert "on_finish for" in d.read_log()
        return files
    finally:
        rcv.close()


def test_every_file_arrives_with_its_manifest():
    """ship-example.sh as on_finish: every finished file and its manifest
    reach the receiver byte for byte; the manifest agrees with perf."""
    with Daemon(config={}, start=False) as d:
        ship_through_ship_example(d, 3)
        # the same counts in the Prometheus text
        text = subprocess.run([harness.PERFSPILLCTL, "-s", d.sock,
                               "metrics"], capture_output=True,
                              text=True, check=True).stdout
        assert 'perfspill_handoffs_total{result="ok"} 3\n' in text, text
        assert 'perfspill_handoffs_total{result="failed"} 0\n' in text


def test_ship_example_with_a_space_in_the_output_dir():
    """The paths ship-example.sh is given are used whole: an output
    directory with a space in its name ships like any other."""
    top = tempfile.mkdtemp(prefix="perfspill-space-")
    os.chmod(top, 0o755)
    try:
        with Daemon(config={}, start=False,
                    outdir=os.path.join(top, "trace files")) as d:
            ship_through_ship_example(d, 1)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def check_manifest(path):
    with open(path + ".json") as f:
        m = json.load(f)
    assert m["file"] == os.path.basename(path)
    assert m["host"] == socket.gethostname()
    with open("/etc/machine-id") as f:
        assert m["machine_id"] == f.read().strip()
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert m["boot_id"] == f.read().strip()
    assert m["kernel"]["release"] == os.uname().release
    assert m["bytes"] == os.path.getsize(path), m
    assert m["settings"]["events"] == ["cpu-clock"], m["settings"]
    assert m["settings"]["freq"] == 99
    assert m["seq"] == int(re.search(r"-(\d{6})\.data$", path).group(1))
    # samples: perf's own count
    counts, _ = harness.perf_stats(path)
    assert m["samples"] == counts.get("SAMPLE", 0), (m["samples"], counts)
    assert m["lost"] == 0 and m["lost_samples"] == 0, m
    assert m["samples"] > 0, m
    # first and last sample time: perf script's, to the nanosecond
    out = perf("script", "-F", "time", "--ns", "-i", path).stdout
    ts = [int(round(float(t.rstrip(":")) * 1e9))
          for t in out.split() if re.match(r"^\d+\.\d+:?$", t)]
    assert ts, out[:500]
    assert m["first_sample_time"] == min(ts), (m["first_sample_time"],
                                              min(ts))
    assert m["last_sample_time"] == max(ts), (m["last_sample_time"], max(ts))
    assert m["first_sample_utc_approx"].endswith("Z")
    # build-ids: what perf buildid-list finds is there, once each; each
    # id is the one readelf reads from the file itself
    out = perf("buildid-list", "-i", path).stdout
    theirs = set()
    for line in out.splitlines():
        p = line.split(None, 1)
        if len(p) == 2 and re.match(r"^[0-9a-f]{32,40}$", p[0]) and \
                not p[1].startswith("["):
            theirs.add((p[0], p[1].strip()))
    pairs = [(b["build_id"], b["path"]) for b in m["buildids"]]
    ours = set(pairs)
    assert len(ours) == len(pairs), "duplicates in the manifest"
    assert theirs and theirs <= ours, (theirs - ours)
    checked = 0
    for bid, p in sorted(ours):
        if p.startswith("/") and os.path.isfile(p) and checked < 20:
            want = readelf_id(p)
            if want is not None:
                assert bid == want, (p, bid, want)
                checked += 1
    assert checked > 0, ours


def readelf_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True,
                         text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def test_failing_hook_is_retried_counted_then_given_up():
    """A hook that fails is run again, on_finish_tries runs in all, each
    counted; once the hand-off gives up, retention may take the file (and
    its manifest)."""
    with Daemon(config={}, start=False) as d:
        runs = os.path.join(work(d), "runs")
        hook = script(work(d), "hook",
                      "echo \"$PERFSPILL_NAME $PERFSPILL_TRY\" >> %s\n"
                      "exit 3\n" % runs)
        start_with(d, hook, on_finish_tries=3, max_files=1)
        first = files_of(d, 1)
        assert len(first) == 1, first
        wait_for(lambda: handoffs(d)["gave_up"] == 1, 120, "give up")
        h = handoffs(d)
        assert h["failed"] == 3 and h["ok"] == 0 and h["retrying"] == 0, h
        with open(runs) as f:
            tries = [l.split() for l in f.read().splitlines()]
        assert tries == [[os.path.basename(first[0]), str(n)]
                         for n in (1, 2, 3)], tries
        log = d.read_log()
        assert "exit status 3; try 2 of 3 in 1s" in log, log
        assert "exit status 3; try 3 of 3 in 2s" in log, log
        assert "giving up after 3 tries" in log, log
        # nothing holds it now: the next finished file (held itself)
        # lets retention (max_files 1) take it and its manifest
        files = files_of(d, 1)
        assert files == [f for f in files if f not in first], files
        left = sorted(f for f in os.listdir(d.out) if not f.startswith("."))
        assert left == sorted(os.path.basename(f) for f in
                              files + [files[0] + ".json"]), left
        assert "retention: removed " + os.path.basename(first[0]) in \
            d.read_log()


def test_retention_keeps_files_whose_hand_off_is_retrying():
    """Files waiting for a retry are held like running ones: max_files 1
    removes none of them."""
    with Daemon(config={}, start=False) as d:
        go = os.path.join(work(d), "go")
        hook = script(work(d), "hook",
                      "while ! test -e %s; do sleep 0.1; done\n"
                      "exit 1\n" % go)
        start_with(d, hook, max_files=1, on_finish_tries=2,
                   on_finish_retry="1h")
        files = files_of(d, 3)
        assert len(files) == 3, files
        open(go, "w").close()
        wait_for(lambda: handoffs(d)["retrying"] == 3, 60, "3 retrying")
        # retention runs at the next finished file: it keeps them all
        files = files_of(d, 1)
        wait_for(lambda: handoffs(d)["retrying"] == 4, 60, "4 retrying")
        assert len(d.finished_files()) == 4, d.finished_files()
        assert "retention: removed" not in d.read_log()


def test_retention_keeps_a_file_being_handed_off():
    """max_files 1 while hooks wait on a gate: nothing is removed until
    the hand-offs end; then retention trims to one."""
    with Daemon(config={}, start=False) as d:
        gate = os.path.join(work(d), "gate")
        hook = script(work(d), "hook",
                      "while ! test -e %s; do sleep 0.1; done\n" % gate)
        start_with(d, hook, max_files=1)
        files = files_of(d, 3)
        assert len(files) == 3, files
        h = handoffs(d)
        assert h["running"] == 2 and h["queued"] == 1, h
        open(gate, "w").close()
        wait_for(lambda: handoffs(d)["ok"] == 3, 60, "3 hand-offs")
        # retention runs at the next finished file
        files = files_of(d, 1)
        wait_for(lambda: handoffs(d)["ok"] == 4, 60, "4 hand-offs")
        assert len(d.finished_files()) == 1, d.finished_files()


def test_hanging_hook_is_killed_with_its_children():
    """on_finish_timeout: SIGTERM to the program's process group, then
    SIGKILL; a child the hook started goes too; counted, not retried
    past on_finish_tries."""
    with Daemon(config={}, start=False) as d:
        pids = os.path.join(work(d), "pids")
        # ignores SIGTERM: only the SIGKILL ends it
        hook = script(work(d), "hook",
                      "trap '' TERM\nsleep 1000 &\n"
                      "echo $$ $! >> %s\nwait\nwait\n" % pids)
        start_with(d, hook, on_finish_tries=1, on_finish_timeout="1")
        files_of(d, 1)
        wait_for(lambda: handoffs(d)["gave_up"] == 1, 60, "timeout")
        h = handoffs(d)
        assert h["timed_out"] == 1 and h["failed"] == 1, h
        with open(pids) as f:
            sh, child = (int(x) for x in f.read().split())
        for pid in (sh, child):
            wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
                     open("/proc/%d/stat" % pid).read().split(")")[1]
                     .split()[0] == "Z", 30, "pid %d gone" % pid)
        log = d.read_log()
        assert "terminating it" in log and "killing it" in log, log
        assert "timed out" in log


def test_no_hook_outlives_the_daemon():
    """A program that ignores SIGTERM, and the child it started, running
    at 'perfspillctl shutdown': the daemon ends them (SIGTERM, then
    SIGKILL) and waits for their process group before it exits."""
    with Daemon(config={}, start=False) as d:
        pids = os.path.join(work(d), "pids")
        hook = script(work(d), "hook",
                      "trap '' TERM\nsleep 1000 &\n"
                      "echo $$ $! > %s.tmp && mv %s.tmp %s\nwait\nwait\n" %
                      (pids, pids, pids))
        start_with(d, hook, on_finish_timeout="1h")
        files_of(d, 1)
        wait_for(lambda: os.path.exists(pids), 60, "the hook running")
        with open(pids) as f:
            sh, child = (int(x) for x in f.read().split())
        d.ctl("shutdown")
        assert d.proc.wait(60) == 0
        # gone, not only dying: the daemon reaped them before exiting
        left = [p for p in (sh, child) if os.path.exists("/proc/%d" % p)]
        assert left == [], left
        log = d.read_log()
        assert "still running at exit; terminating it" in log, log
        assert "killing them" in log, log
        # owed still: the next daemon runs it again
        assert [f for f in os.listdir(d.out) if f.endswith(".handoff")]


def test_hook_output_is_bounded():
    """What a program prints reaches the log, up to 16 KiB a run: 2.5 MB
    of it do not (before, all of it went to the daemon's stderr, the log
    file in the output directory when in the background)."""
    with Daemon(config={}, start=False) as d:
        hook = script(work(d), "hook",
                      "echo first line\n"
                      "yes perfspill-output-line | head -n 100000\n"
                      "echo last line >&2\n")
        start_with(d, hook)
        files_of(d, 1)
        wait_for(lambda: handoffs(d)["ok"] == 1, 60, "a hand-off")
        log = d.read_log()
        assert ": | first line\n" in log, log[-2000:]
        n = log.count(": | perfspill-output-line\n")
        # 16 KiB, and the line that crossed it
        assert 0 < n and (n - 1) * len("perfspill-output-line") < 16 * 1024, n
        assert log.count("output past 16 KiB is not logged") == 1, \
            log[-2000:]
        assert "last line" not in log
        assert os.path.getsize(d.log) < 512 * 1024, os.path.getsize(d.log)


def test_concurrency_bound_and_a_responsive_loop():
    """At most on_finish_jobs programs at once, the rest queued; status
    answers while they run; each program runs as on_finish_user (not
    root), gets only fds 0-2 (its output a pipe the daemon reads into its
    log) and the facts in its environment."""
    with Daemon(config={}, start=False) as d:
        gate = os.path.join(work(d), "gate")
        log = os.path.join(work(d), "intervals")
        fds = os.path.join(work(d), "fds")
        hook = script(work(d), "hook",
                      "echo start $(date +%%s%%N) >> %s\n"
                      "echo $$ > %s.$PERFSPILL_SEQ\n"
                      "env > %s.env.$PERFSPILL_SEQ\n"
                      "echo $(id -u) $(id -g) $(id -G) > %s.id.$PERFSPILL_SEQ\n"
                      "echo said by $PERFSPILL_SEQ\n"
                      "while ! test -e %s; do sleep 0.1; done\n"
                      "echo end $(date +%%s%%N) >> %s\n" %
                      (log, fds, fds, fds, gate, log))
        start_with(d, hook, on_finish_jobs=2)
        files = files_of(d, 5)
        wait_for(lambda: handoffs(d)["running"] == 2, 60, "2 running")
        h = handoffs(d)
        assert h["running"] == 2 and h["queued"] == 3, h
        # the loop answers while they run, many times over
        for _ in range(20):
            assert d.status()["handoffs"]["running"] == 2
        text = subprocess.run([harness.PERFSPILLCTL, "-s", d.sock, "status"],
                              capture_output=True, text=True,
                              check=True).stdout
        assert "hand-off:   2 running, 3 queued, 0 retrying; 0 ok" in text, \
            text
        # what the two running programs hold: 0-2 and the shell's own
        # script, nothing of the daemon's (a ring, the socket, a file)
        pids = [int(open(f).read()) for f in glob.glob(fds + ".[0-9]*")]
        assert len(pids) == 2, pids
        for pid in pids:
            held = {int(fd): os.readlink("/proc/%d/fd/%s" % (pid, fd))
                    for fd in os.listdir("/proc/%d/fd" % pid)}
            assert held[0] == "/dev/null", held
            assert held[1] == held[2] and held[1].startswith("pipe:"), \
                held
            assert all(fd <= 2 or t == hook for fd, t in held.items()), held
        open(gate, "w").close()
        wait_for(lambda: handoffs(d)["ok"] == 5, 60, "5 hand-offs")
        ev = []
        with open(log) as f:
            for line in f:
                k, t = line.split()
                ev.append((int(t), 0 if k == "end" else 1))
        assert len(ev) == 10, ev
        n = most = 0
        for _, k in sorted(ev):
            n += 1 if k else -1
            most = max(most, n)
        assert most == 2, most
        for p in files:
            seq = int(re.search(r"-(\d{6})\.data$", p).group(1))
            with open("%s.env.%d" % (fds, seq)) as f:
                env = dict(l.split("=", 1) for l in f.read().splitlines()
                           if "=" in l)
            assert env["PERFSPILL_FILE"] == p, env
            assert env["PERFSPILL_MANIFEST"] == p + ".json", env
            with open(p + ".json") as f:
                m = json.load(f)
            assert int(env["PERFSPILL_SAMPLES"]) == m["samples"]
            assert int(env["PERFSPILL_SEQ"]) == seq
            assert env["PERFSPILL_HOST"] == socket.gethostname()
            assert env["PERFSPILL_START"].endswith("Z")
            # who ran it: on_finish_user, its own group only
            user = harness.handoff_user()
            with open("%s.id.%d" % (fds, seq)) as f:
                ids = [int(x) for x in f.read().split()]
            assert ids[:2] == [user.pw_uid, user.pw_gid] and \
                set(ids[2:]) == {user.pw_gid}, ids
            # what it said, in the daemon's log
            assert "on_finish for %s: | said by %d\n" % (
                os.path.basename(p), seq) in d.read_log()
            assert "PERFSPILL_LOST" in env and "PERFSPILL_END" in env


def test_reload_without_on_finish_drops_the_queue():
    """on_finish turned off by a reload: the files waiting are let go
    (retention may take them), the run going on finishes."""
    with Daemon(config={}, start=False) as d:
        gate = os.path.join(work(d), "gate")
        hook = script(work(d), "hook",
                      "while ! test -e %s; do sleep 0.1; done\n" % gate)
        start_with(d, hook, on_finish_jobs=1)
        files_of(d, 3)
        h = handoffs(d)
        assert h["running"] == 1 and h["queued"] == 2, h
        with open(d.config, "w") as f:
            json.dump({"on_finish": "", "freq": 99}, f)
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: handoffs(d)["gave_up"] == 2, 60, "queue dropped")
        h = handoffs(d)
        assert h["queued"] == 0 and h["running"] == 1, h
        assert "not run (on_finish is off now)" in d.read_log()
        open(gate, "w").close()
        wait_for(lambda: handoffs(d)["ok"] == 1, 60, "the run finished")


def test_missing_program_is_a_counted_failure():
    """A program that cannot be run fails like one that exits non-zero:
    logged, counted, retried, given up; the daemon stays up."""
    with Daemon(config={}, start=False) as d:
        start_with(d, os.path.join(work(d), "no-such-program"),
                   on_finish_tries=2)
        files_of(d, 1)
        wait_for(lambda: handoffs(d)["gave_up"] == 1, 60, "give up")
        h = handoffs(d)
        assert h["failed"] == 2 and h["ok"] == 0, h
        assert "no-such-program: No such file or directory" in d.read_log()
        assert d.alive()


def test_remove_after_handoff():
    """remove_after_handoff: a file handed off goes with its manifest; a
    file whose hand-off failed stays."""
    with Daemon(config={}, start=False) as d:
        hook = script(work(d), "hook",
                      "case $PERFSPILL_SEQ in *1) exit 1;; esac\n")
        start_with(d, hook, remove_after_handoff=True, on_finish_tries=1)
        files = files_of(d, 2)
        wait_for(lambda: handoffs(d)["ok"] + handoffs(d)["gave_up"] == 2,
                 60, "2 hand-offs")
        h = handoffs(d)
        assert h["ok"] == 1 and h["removed"] == 1, h
        left = sorted(os.listdir(d.out))
        kept = [p for p in files if p.endswith("1.data")]
        assert [os.path.basename(p) for p in kept] == \
            [f for f in left if f.endswith(".data")], left
        assert [f for f in left if f.endswith(".json")] == \
            [os.path.basename(kept[0]) + ".json"], left


def test_salvaged_file_gets_a_manifest():
    """A .partial left by kill -9 is salvaged at the next start and gets
    a manifest from its own records, which perf agrees with."""
    with Daemon() as d:
        crash_while_recording(d)
        d.start()
        files = d.finished_files()
        assert len(files) == 1, os.listdir(d.out)
        with open(files[0] + ".json") as f:
            m = json.load(f)
        assert m["salvaged"] is True and m["opened"] is None, m
        assert m["bytes"] == os.path.getsize(files[0])
        counts, _ = harness.perf_stats(files[0])
        assert m["samples"] == counts.get("SAMPLE", 0) > 0, (m, counts)
        out = perf("script", "-F", "time", "--ns", "-i", files[0]).stdout
        ts = [int(round(float(t.rstrip(":")) * 1e9))
              for t in out.split() if re.match(r"^\d+\.\d+:?$", t)]
        assert (m["first_sample_time"], m["last_sample_time"]) == \
            (min(ts), max(ts)), m
        # the build-ids the finished file holds: perf's view of them
        out = perf("buildid-list", "-i", files[0]).stdout
        theirs = {tuple(line.split(None, 1)) for line in out.splitlines()
                  if re.match(r"^[0-9a-f]{32,40} ", line)}
        ours = {(b["build_id"], b["path"]) for b in m["buildids"]}
        assert theirs <= ours, (theirs - ours)


def test_hand_off_outlives_a_daemon_restart():
    """Files whose hand-off had not succeeded when the daemon stopped (an
    upgrade, a reboot) are handed off by the next daemon with the same
    facts, and its retention at start keeps them; a file handed off is
    not run again by a third."""
    with Daemon(config={}, start=False) as d:
        runs = os.path.join(work(d), "runs")
        hook = script(work(d), "hook",
                      "echo \"$PERFSPILL_NAME $PERFSPILL_SEQ "
                      "$PERFSPILL_SAMPLES\" >> %s\n"
                      "[ -e %s/ok ] || exit 3\n" % (runs, work(d)))
        start_with(d, hook, on_finish_tries=100, on_finish_retry="3600",
                   max_files=1)
        files = files_of(d, 2)
        assert len(files) == 2, files
        wait_for(lambda: handoffs(d)["retrying"] == 2, 60, "2 retries")
        d.stop_daemon()
        with open(runs) as f:
            before = sorted(f.read().splitlines())
        open(os.path.join(work(d), "ok"), "w").close()
        os.unlink(runs)
        d.start()
        wait_for(lambda: handoffs(d)["ok"] == 2, 60,
                 "the hand-offs resumed")
        # max_files 1 at start: held, both are still there
        assert d.finished_files() == files, os.listdir(d.out)
        with open(runs) as f:
            assert sorted(f.read().splitlines()) == before
        log = d.read_log()
        for p in files:
            assert "on_finish for %s: resumed" % os.path.basename(p) \
                in log, log
        # shipped: a third daemon has nothing to resume
        d.stop_daemon()
        os.unlink(runs)
        d.start()
        h = handoffs(d)
        assert h["queued"] + h["running"] + h["ok"] == 0, h
        assert not os.path.exists(runs)
        assert [f for f in os.listdir(d.out) if f.endswith(".handoff")] \
            == [], os.listdir(d.out)


def test_salvaged_and_unmanifested_files_are_handed_off():
    """Files finished outside a recording's close get their manifest and
    hand-off too: a .partial salvaged at start (kill -9), and a .data a
    crash left without its manifest (killed between the rename and the
    manifest)."""
    with Daemon(config={}, start=False) as d:
        runs = os.path.join(work(d), "runs")
        hook = script(work(d), "hook",
                      "echo \"$PERFSPILL_NAME $2\" >> %s\n" % runs)
        start_with(d, hook)
        shipped = files_of(d, 1)
        wait_for(lambda: handoffs(d)["ok"] == 1, 60, "a hand-off")
        crash_while_recording(d)
        os.unlink(shipped[0] + ".json")
        os.unlink(runs)
        d.start()
        files = d.finished_files()
        assert len(files) == 2, os.listdir(d.out)
        wait_for(lambda: handoffs(d)["ok"] == 2, 60, "2 hand-offs")
        with open(runs) as f:
            got = sorted(l.split() for l in f.read().splitlines())
        assert got == [[os.path.basename(p), p + ".json"] for p in files], \
            got
        for p in files:
            with open(p + ".json") as f:
                m = json.load(f)
            counts, _ = harness.perf_stats(p)
            assert m["samples"] == counts.get("SAMPLE", 0) > 0, (m, counts)
            assert m["bytes"] == os.path.getsize(p), m


def test_on_finish_only_from_the_config_file():
    """A peer on the socket cannot make the daemon run a program."""
    with Daemon() as d:
        rc, rep = d.ctl("configure", "on_finish=/bin/true", check=False)
        assert rc != 0, rep
        r = d.request({"cmd": "configure",
                       "args": {"on_finish": "/bin/true"}})
        assert not r.get("ok"), r
        r = d.request({"cmd": "start", "args": {"on_finish": "/bin/true"}})
        assert not r.get("ok"), r
        assert d.status()["handoffs"]["program"] == ""


harness.main(globals())

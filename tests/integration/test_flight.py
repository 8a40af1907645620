"""The flight recorder (mode flight): the last window in memory, nothing
written while it waits, a snapshot (command, SIGUSR2, a PSI trigger) as
one finished file that every reader takes, holding samples of the last
window only and naming every task that has samples in it."""
import json
import os
import signal
import subprocess
import sys
import time

import harness
import test_readers
from cgroupfs import Cgroups
from harness import Daemon, perf, Skip

WINDOW = 3


def flight(**kw):
    cfg = {"mode": "flight", "window": WINDOW, "events": ["cpu-clock"],
           "freq": 499, "callgraph": True, "record_on_start": True}
    cfg.update(kw)
    return cfg


def manifest(path):
    with open(path + ".json") as f:
        return json.load(f)


def script(path):
    """(comm, tid, time) of every sample perf script shows."""
    out = perf("script", "-F", "comm,tid,time", "-i", path).stdout
    rows = []
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 3:
            rows.append((" ".join(p[:-2]), int(p[-2]),
                         float(p[-1].rstrip(":"))))
    return rows


def cpu_times(path):
    """The sample times of each CPU perf script shows."""
    out = perf("script", "-F", "cpu,time", "-i", path).stdout
    times = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2:
            times.setdefault(p[0], []).append(float(p[1].rstrip(":")))
    return times


def write_bytes(pid):
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            k, v = line.split(":")
            if k == "write_bytes":
                return int(v)
    raise AssertionError("no write_bytes in /proc/%d/io" % pid)


def test_snapshot_holds_the_window_and_names_its_tasks():
    """A task that started (its COMM) before the window and exited inside
    it, and one still running: both named, every sample named, and no
    sample older than the window."""
    # a second snapshot a second later: below the default interval
    with Daemon(flight(snapshot_interval=1)) as d:
        live = harness.spinner(300)
        # runs past a window (wall time: the machine may be busy), is
        # ended, and the snapshot comes right after: its COMM is older
        # than the window, its EXIT inside it
        gone = harness.spinner(300)
        time.sleep(WINDOW + 1)
        gone.kill()
        gone.wait()
        rc, rep = d.ctl("snapshot")
        path = rep["data"]["finished_path"]
        assert rep["data"]["finished_whole"], rep
        live.kill()
        live.wait()
        rows = script(path)
        assert rows, "no samples in the snapshot"
        times = [t for _, _, t in rows]
        assert max(times) - min(times) <= WINDOW, (min(times), max(times))
        # pid -1 is the kernel's word for a task sampled after it was
        # unhashed on its way out (perf_event_pid_type): no recorder can
        # name it (the machine is shared: others' tasks exit all the time)
        unnamed = sorted({(c, tid) for c, tid, _ in rows
                          if c.startswith(":") and tid != -1})
        assert not unnamed, "samples of unnamed tasks: %s" % unnamed[:10]
        comms = {tid: c for c, tid, _ in rows}
        assert comms.get(gone.pid) == "spinner", (gone.pid, comms)
        assert comms.get(live.pid) == "spinner", (live.pid, comms)
        m = manifest(path)
        assert m["snapshot_trigger"] == "command", m
        assert m["samples"] == len(rows), (m["samples"], len(rows))
        st = d.status()
        assert st["flight"]["snapshots"] == 1, st["flight"]
        # the recording went on: a second snapshot holds what came after
        time.sleep(1)
        path2 = d.ctl("snapshot")[1]["data"]["finished_path"]
        # each CPU's ring goes on where the first snapshot took it (across
        # CPUs a sample may be older: it was in its ring, not yet written,
        # when the snapshot read that ring)
        t1, t2 = cpu_times(path), cpu_times(path2)
        assert t2, "no samples in the second snapshot"
        for cpu, ts in t2.items():
            assert min(ts) > max(t1.get(cpu, [0])), (cpu, min(ts),
                                                     max(t1[cpu]))
        for p in (path, path2):
            test_readers.check_stats_inject_buildids(p)
            test_readers.check_sample_time(p)
            harness.perf_valid(p, allow_lost=True)


def test_nothing_written_while_waiting():
    """No file and no byte written by the daemon while a flight recording
    waits under load; the same load recorded continuously does write
    (the measure works here), and SIGUSR2 then takes a snapshot."""
    load = harness.spinner(60)
    try:
        with Daemon(flight(drain_ms=100)) as d:
            # after the start's log lines (the log is the daemon's too)
            harness.wait_for(lambda: d.status()["totals"]["samples"] > 100,
                             what="samples in the window")
            # enough drains (every 100 ms) to have written many times
            # over in a window of 2 s: a recorder that writes while it
            # waits does so in every window. A page the kernel once
            # accounted to the daemon outside any write of its own (seen
            # once in a CI rehearsal: 4 KiB with no write(2) and no log
            # line) is not that, so one window in three must be clean
            deltas = []
            for _ in range(3):
                before = write_bytes(d.proc.pid)
                time.sleep(2)
                deltas.append(write_bytes(d.proc.pid) - before)
                if deltas[-1] == 0:
                    break
            assert deltas[-1] == 0, deltas
            assert sorted(os.listdir(d.out)) == [".perfspilld.lock"], \
                os.listdir(d.out)
            st = d.status()
            assert st["flight"]["bytes"] > 0, st["flight"]
            assert st["totals"]["bytes_written"] == 0, st["totals"]
            d.proc.send_signal(signal.SIGUSR2)
            harness.wait_for(lambda: d.finished_files(),
                             what="the SIGUSR2 snapshot")
            harness.wait_for(lambda: os.path.exists(d.finished_files()[0] +
                                                    ".json"),
                             what="its manifest")
            path = d.finished_files()[0]
            assert manifest(path)["snapshot_trigger"] == "SIGUSR2"
            assert harness.perf_valid(path, allow_lost=True) > 0
        with Daemon(flight(mode="continuous", drain_ms=100)) as d:
            before = write_bytes(d.proc.pid)
            harness.wait_for(lambda: write_bytes(d.proc.pid) > before,
                             what="a continuous recording's writes")
    finally:
        load.kill()
        load.wait()


FALSE_WORDS = "not recording, nothing to rotate or snapshot"


def test_a_refused_sigusr2_logs_why():
    """SIGUSR2 refused while recording says the true reason in the log:
    within snapshot_interval of the last snapshot, and while a snapshot
    is being written (two signals at once; tried until the second comes
    while the first is built), never that nothing records."""
    load = harness.spinner(120)
    crowd = None
    try:
        with Daemon(flight()) as d:
            harness.wait_for(lambda: d.status()["flight"]["bytes"] > 0,
                             what="a window")
            d.proc.send_signal(signal.SIGUSR2)
            harness.wait_for(lambda: d.finished_files(),
                             what="the first SIGUSR2 snapshot")
            d.proc.send_signal(signal.SIGUSR2)
            harness.wait_for(
                lambda: "SIGUSR2: session default: no snapshot: the last "
                "snapshot was" in d.read_log(), what="the refusal")
            assert FALSE_WORDS not in d.read_log()
            d.ctl("configure", "snapshot_interval=0")
            busy = "SIGUSR2: session default: no snapshot: a snapshot is " \
                "being written"
            # many tasks make each snapshot's /proc walk long enough for
            # a signal to come during it
            crowd = subprocess.Popen(
                [sys.executable, "-c", "import threading, time\n"
                 "for _ in range(3000):\n"
                 "    threading.Thread(target=time.sleep, args=(600,),"
                 " daemon=True).start()\n"
                 "print('ready', flush=True)\ntime.sleep(600)\n"],
                stdout=subprocess.PIPE)
            assert crowd.stdout.readline().strip() == b"ready"
            for _ in range(20):
                n = len(d.finished_files())
                taken = d.read_log().count("SIGUSR2: session default: "
                                           "snapshot, writing")
                # two signals sent back to back are one to the kernel
                # when the second comes before the first is delivered
                # (a loop slow to wake on a loaded machine): the second
                # goes once the first snapshot has begun
                d.proc.send_signal(signal.SIGUSR2)
                harness.wait_for(lambda: d.read_log().count(
                    "SIGUSR2: session default: snapshot, writing") > taken,
                    what="the first snapshot begun")
                # a small snapshot is written in a few milliseconds (the
                # crowd's tasks lengthen its /proc walk): keep signalling
                # until it is finished, so that one signal comes while it
                # is written (one sent after it starts the next snapshot,
                # which the next round waits for)
                while len(d.finished_files()) <= n:
                    d.proc.send_signal(signal.SIGUSR2)
                    time.sleep(0.001)
                harness.wait_for(lambda: "SIGUSR2: session default: "
                                 "snapshot, writing" not in
                                 d.read_log().rsplit("finished", 1)[-1],
                                 what="no snapshot being written")
                # the second signal's line, if it was refused, is written
                # before the first snapshot's file is finished
                if busy in d.read_log():
                    break
            assert busy in d.read_log(), d.read_log()
            assert FALSE_WORDS not in d.read_log()
            # with nothing recording, that is what it says
            d.ctl("stop", "--discard")
            d.proc.send_signal(signal.SIGUSR2)
            harness.wait_for(lambda: "SIGUSR2: no session is recording"
                             in d.read_log(), what="the idle line")
            assert d.alive()
    finally:
        load.kill()
        load.wait()
        if crowd is not None:
            crowd.kill()
            crowd.wait()


def test_the_daemons_end_writes_the_window():
    """SIGTERM ends a flight recording as perf record --overwrite ends:
    its window is written, whole, before the daemon exits."""
    load = harness.spinner(60)
    try:
        with Daemon(flight()) as d:
            harness.wait_for(lambda: d.status()["flight"]["bytes"] > 0,
                             what="a window")
            assert d.finished_files() == []
            assert d.stop_daemon() == 0, d.read_log()
            files = d.finished_files()
            assert len(files) == 1, files
            assert manifest(files[0])["snapshot_trigger"] == "stop"
            assert harness.perf_valid(files[0], allow_lost=True) > 0
    finally:
        load.kill()
        load.wait()


def test_refusals():
    with Daemon(flight()) as d:
        rc, rep = d.ctl("rotate", check=False)
        assert rc != 0 and "snapshot" in rep["error"]["message"], rep
    with Daemon({"record_on_start": True}) as d:
        rc, rep = d.ctl("snapshot", check=False)
        assert rc != 0 and "not a flight recording" in \
            rep["error"]["message"], rep
        d.ctl("stop")
        rc, rep = d.ctl("start", "--triggers",
                        '[{"kind":"psi","resource":"cpu"}]', check=False)
        assert rc != 0 and "mode flight" in rep["error"]["message"], rep
        rc, rep = d.ctl("start", "--mode", "flight", "--triggers",
                        '[{"kind":"psi","resource":"gpu"}]', check=False)
        assert rc != 0 and "cpu, memory, io" in rep["error"]["message"], rep
        rc, rep = d.ctl("start", "--mode", "flight", "--triggers",
                        '[{"kind":"psi","resource":"cpu","cgroup":'
                        '"no-such-cgroup-here"}]', check=False)
        assert rc != 0 and "no-such-cgroup-here" in \
            rep["error"]["message"], rep
        assert d.status()["state"] == "idle"


def test_psi_trigger_fires_under_pressure_and_keeps_its_interval():
    """A trigger on a test cgroup's CPU pressure (the machine's own may be
    high already, from other work): quiet while the cgroup is empty; four
    spinners on two CPUs stall each other, and the trigger takes a
    snapshot, again only after trigger_interval."""
    if not os.path.exists("/proc/pressure/cpu"):
        raise Skip("no /proc/pressure: a kernel without PSI")
    interval = 5
    with Cgroups("psi") as cg:
        if not os.path.exists(os.path.join(cg.path("psi"), "cpu.pressure")):
            raise Skip("no cpu.pressure in the test cgroup")
        cfg = flight(trigger_interval=interval, triggers=[
            {"kind": "psi", "resource": "cpu", "type": "some",
             "stall_ms": 200, "window_ms": 2000, "cgroup": cg.rel["psi"]}])
        with Daemon(cfg) as d:
            time.sleep(1.5)
            assert d.finished_files() == [], "fired with no pressure"
            n = max(4, 2 * os.cpu_count())
            t0 = time.monotonic()
            spin = [cg.spinner("psi", 300) for _ in range(n)]
            # the kernel signals at most once a 2 s window
            time.sleep(9)
            for p in spin:
                p.kill()
                p.wait()
            load = time.monotonic() - t0
            harness.wait_for(lambda: d.finished_files(),
                             what="a triggered snapshot")
            # a pending one finishes; the pressure's tail has ended
            time.sleep(2.5)
            files = d.finished_files()
            st = d.status()["flight"]
            ms = [manifest(f) for f in files]
            assert all(m["snapshot_trigger"] == "psi:cpu:" + cg.rel["psi"]
                       for m in ms), [m.get("snapshot_trigger") for m in ms]
            # a trigger each 2 s window under pressure: the interval let
            # through at most one snapshot per 5 s (and one more for the
            # tail of the pressure's average); without it they would
            # come 2 s apart
            assert len(files) <= 2 + int(load) // interval, (len(files),
                                                             load, st)
            opened = sorted(time.mktime(time.strptime(
                m["opened"], "%Y-%m-%dT%H:%M:%SZ")) for m in ms)
            for a, b in zip(opened, opened[1:]):
                # whole seconds in the manifest: one may round down
                assert b - a >= interval - 1, opened
            spun = {p.pid for p in spin}
            assert spun & {tid for _, tid, _ in script(files[0])}
            harness.perf_valid(files[0], allow_lost=True)


if __name__ == "__main__":
    harness.main(globals())

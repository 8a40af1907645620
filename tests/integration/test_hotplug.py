"""CPU hotplug: a CPU that comes online gets a ring (and the recording
rotates to a file whose attrs carry the new ids), one that goes offline
is drained and closed; both are logged and in status.

Simulated: PERFSPILL_CPU_ONLINE_FILE (a test hook, read at start)
replaces /sys/devices/system/cpu/online, so the daemon starts believing
only cpu0 is online and then sees cpu1 come and go, while the kernel
keeps both online. Real: cpu1 is taken offline through
/sys/devices/system/cpu/cpu1/online where the kernel allows it, and
brought back whatever happens."""
import os
import re
import subprocess
import time

import harness
from cgroupfs import Cgroups
from harness import Daemon, perf, perf_valid, Skip, wait_for

CPU1_ONLINE = "/sys/devices/system/cpu/cpu1/online"


def need_two_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        line = f.read().strip()
    if line not in ("0-1",) and not line.startswith("0-"):
        raise Skip("needs cpu0 and cpu1 online (online: %s)" % line)


def spin_on(cpu, secs):
    """A spinner pinned to cpu: its samples carry that cpu."""
    p = subprocess.Popen(["taskset", "-c", str(cpu), harness.SPINNER,
                          str(secs)], stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    return p


def samples_per_cpu(path):
    """{cpu: samples} of the spinner, as perf script reads the file."""
    out = perf("script", "-G", "-F", "comm,cpu", "-i", path).stdout
    n = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s+\[(\d+)\]", line)
        if m and m.group(1) == "spinner":
            n[int(m.group(2))] = n.get(int(m.group(2)), 0) + 1
    return n


def cpu_entry(st, cpu):
    e = [c for c in st["cpus"] if c["cpu"] == cpu]
    return e[0] if e else None


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)    # the daemon never reads half a list


# The daemon looks at the online CPUs every 5 s (record.c,
# RECORD_LOOK_MS), or every drain_ms when that is longer: at drain_ms
# 1000 a look comes once in this many of the drain thread's timed passes.
PASSES_PER_LOOK = 5


def fake_daemon(d, *start_args, drain_ms="100"):
    """Start d believing only cpu0 is online, and record; the fake list."""
    fake = os.path.join(d.dir, "online")
    write(fake, "0\n")
    d.env = {"PERFSPILL_CPU_ONLINE_FILE": fake}
    d.start()
    rc, rep = d.ctl("start", "--drain-ms", drain_ms, *start_args)
    assert rep["ok"], rep
    return fake


def passes(d):
    return d.status()["drain"]["passes"]


def test_simulated_cpu_comes_online_and_goes():
    need_two_cpus()
    with Daemon(start=False) as d:
        fake = fake_daemon(d, "-F", "499")
        st = d.status()
        assert [c["cpu"] for c in st["cpus"]] == [0], st["cpus"]
        first = st["file"]["name"]
        # cpu1 is not recorded: a spinner there leaves no sample
        spin_on(1, 0.3).wait()

        write(fake, "0-1\n")
        st = wait_for(lambda: (lambda s: s if s["cpus_added"] == 1 else
                               None)(d.status()), what="cpu1 opened")
        assert cpu_entry(st, 1)["online"] is True, st["cpus"]
        assert st["file"]["name"] != first, "no rotation for the new ids"
        spin_on(1, 0.5).wait()
        wait_for(lambda: cpu_entry(d.status(), 1)["samples"] > 50,
                 what="samples from cpu1")

        write(fake, "0\n")
        st = wait_for(lambda: (lambda s: s if s["cpus_removed"] == 1 else
                               None)(d.status()), what="cpu1 closed")
        c1 = cpu_entry(st, 1)
        assert c1["online"] is False, st["cpus"]
        # its buffers go once nothing of theirs is in flight
        c1 = wait_for(lambda: (lambda c: c if c["cblocks"] == 0 else None)(
            cpu_entry(d.status(), 1)), what="cpu1's cblocks freed")
        assert c1["aio_inflight"] == 0, c1
        # closed, counted, and nothing more arrives from it
        before = c1["samples"]
        spin_on(1, 0.3).wait()
        time.sleep(0.3)
        assert cpu_entry(d.status(), 1)["samples"] == before
        # and it can come back
        write(fake, "0-1\n")
        wait_for(lambda: d.status()["cpus_added"] == 2, what="cpu1 again")
        rc, rep = d.ctl("stop")
        assert rep["ok"], rep
        log = d.read_log()
        assert "cpu 1 came online" in log and "cpu 1 went offline" in log, \
            log

        files = d.finished_files()
        assert len(files) >= 3, files
        per = {}
        for f in files:
            perf_valid(f)
            per[f] = samples_per_cpu(f)
        # before cpu1 came online: nothing of it in the first file
        assert per[files[0]].get(1, 0) == 0, per
        # after: cpu1's samples, resolved by perf (spinner named), in a
        # later file whose attrs carry its ids
        assert sum(p.get(1, 0) for p in per.values()) > 50, per
        # what the status counted for cpu1 is what the files hold
        assert sum(p.get(1, 0) for p in per.values()) <= \
            rep["data"]["totals"]["samples"]


def test_simulated_cpu_online_with_a_cgroup_filter():
    # the new CPU opens every event once per cgroup, like the others
    need_two_cpus()
    with Cgroups("A") as cg, Daemon(start=False) as d:
        fake = fake_daemon(d, "-F", "499", "-G", cg.rel["A"],
                           "--all-cgroups")
        write(fake, "0-1\n")
        wait_for(lambda: d.status()["cpus_added"] == 1, what="cpu1 opened")
        p = cg.spinner("A", 0.5, cpu=1)
        p.wait()
        wait_for(lambda: cpu_entry(d.status(), 1)["samples"] > 50,
                 what="samples of A from cpu1")
        rc, rep = d.ctl("stop")
        files = d.finished_files()
        last = files[-1]
        perf_valid(last)
        assert samples_per_cpu(last).get(1, 0) > 50, files
        out = perf("report", "--stdio", "-q", "-g", "none", "--sort",
                   "cgroup,pid", "-i", last).stdout
        assert re.search(r"/%s\s+%d:spinner" % (re.escape(cg.rel["A"]),
                                                p.pid), out), out


def test_simulated_cpu_online_within_a_look():
    """The new bound, counted in drain passes (every drain_ms, 1 s): a
    CPU that comes online is opened at the loop's next look, within
    PASSES_PER_LOOK timed passes, with 3 to spare for the rotation's walk
    of /proc (the passes go on meanwhile) and watermark passes."""
    need_two_cpus()
    with Daemon(start=False) as d:
        fake = fake_daemon(d, "-F", "99", drain_ms="1000")
        p0 = passes(d)
        write(fake, "0-1\n")
        st = wait_for(lambda: (lambda s: s if s["cpus_added"] == 1 else
                               None)(d.status()), what="cpu1 opened")
        n = st["drain"]["passes"] - p0
        assert n <= PASSES_PER_LOOK + 3, \
            "cpu1 opened after %d drain passes" % n
        assert cpu_entry(st, 1)["online"] is True, st["cpus"]
        rc, rep = d.ctl("stop")
        for f in d.finished_files():
            perf_valid(f)


def test_simulated_bad_list_keeps_recording():
    """A list that cannot be read, then none at all, each for longer
    than a look (counted in drain passes, 50 a look at drain_ms 100):
    the recording goes on with the CPUs it has."""
    with Daemon(start=False) as d:
        fake = fake_daemon(d, "-F", "99")
        look = 10 * PASSES_PER_LOOK + 2
        write(fake, "garbage\n")
        p0 = passes(d)
        wait_for(lambda: passes(d) >= p0 + look, what="a look")
        os.unlink(fake)
        p0 = passes(d)
        wait_for(lambda: passes(d) >= p0 + look, what="a look")
        st = d.status()
        assert st["state"] == "recording" and st["cpus_removed"] == 0, st
        rc, rep = d.ctl("stop")
        assert rep["ok"], rep
        assert d.alive()


def test_real_cpu1_offline_and_back():
    """Briefly takes cpu1 offline for real: the machine is shared."""
    need_two_cpus()
    if not os.path.exists(CPU1_ONLINE):
        raise Skip("%s does not exist (cpu1 cannot be hot-unplugged)" %
                   CPU1_ONLINE)
    with Daemon() as d:
        rc, rep = d.ctl("start", "-F", "499", "--drain-ms", "100")
        assert rep["ok"], rep
        try:
            try:
                with open(CPU1_ONLINE, "w") as f:
                    f.write("0")
            except OSError as e:
                raise Skip("the kernel refuses to offline cpu1: %s" % e)
            st = wait_for(lambda: (lambda s: s if s["cpus_removed"] == 1
                                   else None)(d.status()),
                          what="cpu1 closed")
            assert cpu_entry(st, 1)["online"] is False
        finally:
            with open(CPU1_ONLINE, "w") as f:
                f.write("1")
        st = wait_for(lambda: (lambda s: s if s["cpus_added"] == 1 else
                               None)(d.status()), what="cpu1 reopened")
        assert cpu_entry(st, 1)["online"] is True
        spin_on(1, 0.3).wait()
        rc, rep = d.ctl("stop")
        assert rep["ok"], rep
        for f in d.finished_files():
            perf_valid(f)
        assert sum(samples_per_cpu(f).get(1, 0)
                   for f in d.finished_files()) > 0


harness.main(globals())

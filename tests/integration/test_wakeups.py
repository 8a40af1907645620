"""What wakes the always-on recorder (issue 38, item 6): counted, not
timed. The loop wakes once a tick (drain_ms), not again because its
event loop's clock had not reached the deadline (libevent's coarse clock
made it wait 1 ms more, 1-3 times, after half of the ticks); a stop's
build-id flush waits once for the reader's queue, not once per file
read. Wakeups are voluntary context switches, which a busy machine does
not add to (it adds involuntary ones); ticks are counted by the drain
passes they ask for (a pass at a ring's watermark only adds to them)."""
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

import harness
from harness import Daemon, perf, perf_valid


def wakeups(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches for %d" % tid)


def test_the_loop_wakes_once_a_tick():
    """10 s of frame-pointer stacks at 99 Hz (the rings never reach their
    watermark): the loop's wakeups are the ticks' (the passes), with 2 to
    spare; the file is read whole by perf with the samples status
    counted."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g",
              "--drain-ms", "1000")
        pid = d.proc.pid
        time.sleep(1.5)
        p0 = d.status()["drain"]["passes"]
        w0 = wakeups(pid, pid)
        time.sleep(10)
        w1 = wakeups(pid, pid)
        st = d.status()
        p1 = st["drain"]["passes"]
        assert p1 - p0 >= 8, (p0, p1)
        assert w1 - w0 <= p1 - p0 + 2, \
            "the loop woke %d times for %d ticks" % (w1 - w0, p1 - p0)
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        assert perf_valid(files[0]) > 0



def has_thread(pid, comm):
    try:
        thread_of(pid, comm)
        return True
    except AssertionError:
        return False


def thread_of(pid, comm):
    """The tid of pid's thread named comm."""
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() == comm:
                return int(tid)
    raise AssertionError("no thread %s in %d" % (comm, pid))


def look(d, fw):
    """Ticks (drain passes), the file worker's wakeups, finished files
    (each finished file is a job of the worker: its JIT copy)."""
    return (d.status()["drain"]["passes"], wakeups(d.proc.pid, fw),
            len(d.finished_files()))


def asleep(d, fw, secs, ticks, why):
    """Over secs seconds (at least ticks ticks), the file worker wakes at
    most once, and twice for each file that finished meanwhile (a CPU
    that another test takes offline rotates the file)."""
    p0, w0, f0 = look(d, fw)
    time.sleep(secs)
    p1, w1, f1 = look(d, fw)
    assert p1 - p0 >= ticks, (p0, p1)
    assert w1 - w0 <= 1 + 2 * (f1 - f0), \
        "%s, yet the file worker woke %d times in %d ticks" % (
            why, w1 - w0, p1 - p0)


def spin(secs):
    """A process that spins secs seconds (sampled), then exits (or is
    killed)."""
    return subprocess.Popen(["python3", "-c", "import time\n"
                             "t = time.time() + %f\n"
                             "while time.time() < t: pass" % secs])


def test_the_file_worker_sleeps_without_live_maps():
    """The JIT maps' scan rides on the loop's tick and runs on the file
    worker only while a map's process lives (jitnames.h): with no map in
    the watched directory the worker does not wake over 10 ticks (it woke
    each second); with the map of a live process it scans; once that
    process is gone it sleeps again, and the map is still copied beside
    the file, the scans having seen its process alive."""
    jitdir = tempfile.mkdtemp(prefix="jitdir-")
    try:
        with Daemon(env={"PERFSPILL_TEST_JITMAP_DIR": jitdir}) as d:
            d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g",
                  "--drain-ms", "1000")
            pid = d.proc.pid
            fw = thread_of(pid, "fileworker")
            time.sleep(1.5)
            asleep(d, fw, 10, 8, "no map")
            child = spin(600)
            with open(os.path.join(jitdir, "perf-%d.map" % child.pid),
                      "w") as f:
                f.write("1000 10 jitted_thing\n")
            w2 = wakeups(pid, fw)
            harness.wait_for(lambda: wakeups(pid, fw) - w2 >= 3, 60,
                             "the live map's process scanned")
            child.kill()
            child.wait()
            time.sleep(2)
            asleep(d, fw, 5, 3, "the map's process is gone")
            d.ctl("stop")
            # a CPU taken offline by another test rotates the file
            files = d.finished_files()
            harness.wait_for(lambda: any(os.path.exists(
                f + ".perf-maps.tar") for f in files), 60, "the map copied")
            names = [n for f in files if os.path.exists(f + ".perf-maps.tar")
                     for n in tarfile.open(f + ".perf-maps.tar").getnames()]
            assert "perf-%d.map" % child.pid in names, names
    finally:
        shutil.rmtree(jitdir)


def test_the_build_id_reader_waits_for_a_batch():
    """A program run every few tenths of a second maps files the reader
    has read (the same inode, unchanged): a drain pass no longer wakes
    the reader for them; it wakes once BUILDID_BATCH files wait or the
    first has waited BUILDID_BATCH_NS (5 s), so over 12 ticks it wakes
    at most half as often as the ticks (it woke at each, 14 times in 12
    here; now 2-5 with other programs mapping files on the host, and the
    lock the drain's notes take). The file still names the program's id,
    read after its last run exited."""
    with Daemon() as d:
        prog = os.path.join(d.dir, "true-copy")
        shutil.copy("/usr/bin/true", prog)
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g",
              "--drain-ms", "1000")
        pid = d.proc.pid
        subprocess.run([prog], check=True)
        harness.wait_for(lambda: has_thread(pid, "buildid"), 60,
                         "the build-id reader started")
        harness.wait_for(lambda: d.status()["build_ids"]["reading"] == 0,
                         60, "the first reads done")
        bid = thread_of(pid, "buildid")
        p0, w0 = d.status()["drain"]["passes"], wakeups(pid, bid)
        while d.status()["drain"]["passes"] - p0 < 12:
            subprocess.run([prog], check=True)
            time.sleep(0.3)
        p1, w1 = d.status()["drain"]["passes"], wakeups(pid, bid)
        assert w1 - w0 <= (p1 - p0) // 2, \
            "the build-id reader woke %d times in %d ticks" % (
                w1 - w0, p1 - p0)
        rc, rep = d.ctl("stop")
        out = perf("buildid-list", "-i", rep["data"]["path"]).stdout
        want = subprocess.run(["readelf", "-n", prog], capture_output=True,
                              text=True).stdout
        ids = [l.split()[0] for l in out.splitlines()
               if l.split()[1:] == [prog]]
        assert ids and ids[0] in want, (ids, out)


if __name__ == "__main__":
    harness.main(globals())

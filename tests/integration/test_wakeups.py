"""What wakes the always-on recorder (issue 38, item 6): counted, not
timed. The drain thread reads every ring every drain_ms by itself (the
timeout of the wait it sleeps in anyway), so the loop does not wake to
wake it; the loop looks at its own duties (CPUs online, free space, the
output directory, the pool) every 5 s, and comes at a file's age when a
rotation is due sooner. A stop's build-id flush waits once for the
reader's queue, not once per file read. The file worker and the
build-id reader sleep while they have nothing to do. Wakeups are
voluntary context switches, which a busy machine does not add to (it
adds involuntary ones); time is counted by the drain passes (a pass at
a ring's watermark only adds to them)."""
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

import harness
from harness import Daemon, perf, perf_valid, wait_for

# drain_ms 1000 against the loop's look every 5 s (record.c,
# RECORD_LOOK_MS): the passes a look may come at most once in
PASSES_PER_LOOK = 5


def wakeups(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches for %d" % tid)


def drain_tids(pid):
    tids = []
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
            if f.read().strip() == "drain":
                tids.append(int(t))
    return tids


def test_the_drain_thread_times_its_own_pass():
    """12 s of frame-pointer stacks at 99 Hz (the rings rarely reach
    their watermark): the drain passes go on every drain_ms, while the
    loop wakes once every PASSES_PER_LOOK of them, with 2 to spare (it
    woke once a pass when its tick woke the drain thread); the drain
    threads wake no more than their passes, with 2 to spare (their own
    timer costs no second wakeup). The file is read whole by perf. The
    JIT maps are looked for in an empty directory: a live process's map
    in /tmp would have the loop look each second, as it should."""
    jitdir = tempfile.mkdtemp(prefix="jitdir-")
    with Daemon(env={"PERFSPILL_TEST_JITMAP_DIR": jitdir}) as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99", "-g",
              "--drain-ms", "1000", "--rotate-interval", "0")
        pid = d.proc.pid
        time.sleep(1.5)
        drains = drain_tids(pid)
        assert drains, "no drain thread"
        p0 = d.status()["drain"]["passes"]
        w0 = wakeups(pid, pid)
        dw0 = sum(wakeups(pid, t) for t in drains)
        time.sleep(12)
        w1 = wakeups(pid, pid)
        dw1 = sum(wakeups(pid, t) for t in drains)
        p1 = d.status()["drain"]["passes"]
        passes = p1 - p0
        assert passes >= 8, (p0, p1)
        assert w1 - w0 <= passes // PASSES_PER_LOOK + 2, \
            "the loop woke %d times in %d passes" % (w1 - w0, passes)
        assert dw1 - dw0 <= passes + 2, \
            "the drain threads woke %d times for %d passes" % (dw1 - dw0,
                                                              passes)
        d.ctl("stop")
        files = d.finished_files()
        assert len(files) == 1, files
        assert perf_valid(files[0]) > 0
    shutil.rmtree(jitdir)


def test_age_rotation_comes_at_the_age_not_at_the_look():
    """rotate_interval 1 s: the tick comes at each file's age, not at the
    loop's next look (5 s), so files are finished at least one every
    third drain pass (about one a pass; at the look's pace it would be
    one in five); each is read whole by perf."""
    with Daemon() as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99",
              "--drain-ms", "1000", "--rotate-interval", "1")
        wait_for(lambda: d.status()["totals"]["files_finished"] >= 1,
                 what="the first age rotation")
        st = d.status()
        p0, f0 = st["drain"]["passes"], st["totals"]["files_finished"]
        time.sleep(12)
        st = d.status()
        passes = st["drain"]["passes"] - p0
        files = st["totals"]["files_finished"] - f0
        assert passes >= 8, passes
        assert 3 * files >= passes, \
            "%d age rotations in %d drain passes" % (files, passes)
        d.ctl("stop")
        for f in d.finished_files():
            perf_valid(f)


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

"""Crafted files that say costly things (issue 40, made by hostile.py):
perfspill-flame reads each, or refuses it by name, within 512 MiB
resident (the child's ru_maxrss from wait4) and never with a signal; a
CPU-time limit of 60 s stands in as the guard on a hang. No wall-clock
threshold: a loaded machine gives the same verdict as an idle one.
"""
import ctypes
import json
import os
import stat
import struct
import subprocess
import sys
import tempfile

import harness
import hostile

RSS_MAX_MIB = 512
CPU_MAX_S = 60


def _limits():
    """prlimit's arguments: a CPU limit, and in the release build an
    address-space one, so that a reader that runs away stops at 4 GiB,
    not at the machine's end (the sanitizer's shadow needs more address
    space than any limit leaves). prlimit execs the reader itself: the
    RSS wait4 gives is the reader's, not a forked copy of this test's."""
    a = ["prlimit", "--cpu=%d" % CPU_MAX_S]
    if not harness.SANITIZED:
        a.append("--as=%d" % (4 << 30))
    return a


# A small process that starts each reader and waits for it: a process's
# ru_maxrss counts what it held before its exec, a fork of this test (which
# reads large outputs) as much as the reader. The spawner is started once,
# small, and forks the readers; it answers each argv (a JSON line) with
# the reader's exit code, peak RSS (KiB) and CPU seconds.
SPAWNER = r"""
import json, os, subprocess, sys
for line in sys.stdin:
    argv, out, err = json.loads(line)
    with open(out, "wb") as o, open(err, "wb") as e:
        p = subprocess.Popen(argv, stdout=o, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
    print(json.dumps([os.waitstatus_to_exitcode(status), ru.ru_maxrss,
                      ru.ru_utime + ru.ru_stime]), flush=True)
"""
_spawner = None


def spawn(argv):
    """(exit code, stdout, stderr, peak RSS MiB, CPU s) of argv."""
    global _spawner
    if _spawner is None:
        _spawner = subprocess.Popen([sys.executable, "-c", SPAWNER],
                                    stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
    d = tempfile.mkdtemp(prefix="perfspill-hostile-out-")
    out, err = os.path.join(d, "out"), os.path.join(d, "err")
    _spawner.stdin.write(json.dumps([argv, out, err]) + "\n")
    _spawner.stdin.flush()
    rc, rss, cpu = json.loads(_spawner.stdout.readline())
    with open(out, "rb") as f:
        o = f.read().decode(errors="replace")
    with open(err, "rb") as f:
        e = f.read().decode(errors="replace")
    os.unlink(out)
    os.unlink(err)
    os.rmdir(d)
    return rc, o, e, rss / 1024, cpu


def run_flame(path, *args):
    """perfspill-flame on path: (exit code, stdout, stderr, peak RSS in
    MiB, CPU seconds) of that child alone."""
    rc, out, err, rss, cpu = spawn(_limits() + [
        os.path.join(harness.BUILD, "perfspill-flame"), "--no-companion",
        "-q"] + list(args) + [path])
    print("  %s: exit %d, %.1f MiB resident, %.2f s CPU" % (
        os.path.basename(path), rc, rss, cpu), flush=True)
    assert rc >= 0, "killed by signal %d: %s" % (-rc, err[-2000:])
    assert "runtime error" not in err and "Sanitizer" not in err, err[-4000:]
    assert rss <= RSS_MAX_MIB, "%.1f MiB resident reading %s" % (rss, path)
    return rc, out, err, rss, cpu


def crafted(cls, *numbers):
    """The file of hostile.py's class cls, made by another process: this
    one stays small, and so does the copy of it that each reader starts
    as (ru_maxrss counts what a process held before its exec)."""
    d = tempfile.mkdtemp(prefix="perfspill-hostile-")
    subprocess.run([sys.executable, hostile.__file__, d, cls] +
                   [str(n) for n in numbers], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(d, cls + ".data")


def cleanup(path):
    os.unlink(path)
    os.rmdir(os.path.dirname(path))


def total(folded_text):
    return sum(harness.folded(folded_text).values())


def test_compressed_records_decode_to_at_most_256_times_their_bytes():
    """64 MiB of 8-byte samples from 5.6 KB of zstd is refused by name;
    records at the floor (64 KiB from a few bytes, 24 KB of them, no
    FINISHED_ROUND) are read whole within the bound."""
    path = crafted("compressed-big")
    try:
        rc, _, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 1, err
        assert path in err and "more than 256 times its bytes" in err, err
    finally:
        cleanup(path)
    path = crafted("compressed-small")
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert total(out) == 700 * (64 << 10) // 8, total(out)
    finally:
        cleanup(path)


def test_records_without_rounds_wait_in_a_bounded_queue():
    """48 MB of 8-byte samples and no FINISHED_ROUND: 6 Mi records, read
    in halves of the queue's bound."""
    path = crafted("no-rounds", 48 << 20)
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert total(out) == (48 << 20) // 8, total(out)
    finally:
        cleanup(path)


def test_attr_ids_are_checked_before_they_are_copied():
    """2,000 attrs whose id sections each span the file: refused at
    once, nothing copied."""
    path = crafted("attr-ids")
    try:
        rc, _, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 1, err
        assert path in err and "its attrs cannot be read" in err, err
    finally:
        cleanup(path)


def test_forked_children_share_their_parents_maps():
    """10,000 maps, then 40,000 children that fork and map once each
    (7.5 MB; 3.2 GB before): each child sees its parent's maps and its
    own, the parent none of its children's."""
    path = crafted("fork-maps")
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert harness.folded(out) == {
            "parent;[lib0.so]": 2,          # the parent, the last child
            "parent;[own39999.so]": 1,      # the last child's own map
            "parent;[unknown]": 1,          # the parent there: not its
        }, out
    finally:
        cleanup(path)


def test_build_ids_and_cgroups_are_found_by_hash():
    """200,000 build-ids and a mapping of each (34 MB: a linear search
    per mapping took 100 s of CPU, past the guard); 100,000 cgroups and a
    sample in each: every sample under its own cgroup."""
    path = crafted("build-ids", 200000)
    try:
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert harness.folded(out) == {"many;[file0]": 1}, out
    finally:
        cleanup(path)
    path = crafted("cgroups")
    try:
        rc, out, err, _, _ = run_flame(path, "--roots", "cgroup", "-f", "-")
        assert rc == 0, err
        got = harness.folded(out)
        assert len(got) == 100000 and set(got.values()) == {1}, len(got)
        assert got["/cg/0;[unknown]"] == 1 and \
            got["/cg/99999;[unknown]"] == 1
    finally:
        cleanup(path)


def test_times_near_2_63_and_a_file_without_mappings():
    """Sample times past 2^63 (the wall clock saturates) and a pprof of
    samples with no mapping: clean under UBSan in the sanitizer build."""
    for cls, n in (("huge-times", 2), ("no-mappings", 3)):
        path = crafted(cls)
        pb = path + ".pb.gz"
        try:
            rc, out, err, _, _ = run_flame(path, "-f", "-", "-P", pb)
            assert rc == 0, err
            assert total(out) == n, out
            assert os.path.getsize(pb) > 0
        finally:
            os.unlink(pb)
            cleanup(path)


IN_OPEN = 0x20


def watch_opens(d):
    """An inotify descriptor that sees every open of a file in d (an
    O_PATH descriptor or a stat is no open: it shows nothing)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    assert fd >= 0 and libc.inotify_add_watch(fd, d.encode(), IN_OPEN) >= 0
    return fd


def opened(fd):
    """The names of the files opened since the last call."""
    names = []
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            return names
        off = 0
        while off < len(buf):
            _, _, _, n = struct.unpack_from("<iIII", buf, off)
            names.append(buf[off + 16:off + 16 + n].rstrip(b"\0").decode())
            off += 16 + n


def test_memory_grows_with_stacks_not_with_samples():
    """The same 2,000 stacks in a round read 80 and 320 times over (33
    and 133 MB): the reading of the larger costs less than a quarter of
    the 100 MB more, folded and as pprof (1.4 MiB more in the release
    build, 7.6 under ASan, whose quarantine keeps what is freed). What grows with the file is
    let go behind the walk (its mapped pages) or is not kept (no
    per-sample table): memory grows with what is distinct (docs/flame.md:
    a 1 GB recording read in half its size). Before the pages were let
    go, the larger file cost its whole size more."""
    one, four = crafted("repeated", 80), crafted("repeated", 320)
    try:
        extra = (os.path.getsize(four) - os.path.getsize(one)) / (1 << 20)
        for args in (["-f", "-"], ["-P", "/dev/null"]):
            rc1, out1, err1, rss1, _ = run_flame(one, *args)
            rc4, out4, err4, rss4, _ = run_flame(four, *args)
            assert rc1 == 0 and rc4 == 0, err1 + err4
            if args[0] == "-f":
                assert total(out1) == 80 * 2000, total(out1)
                assert total(out4) == 320 * 2000, total(out4)
            assert rss4 - rss1 < extra / 4, (
                "%s: %.1f MiB resident for %.0f MiB more file than the "
                "%.1f MiB of the smaller" % (" ".join(args), rss4 - rss1,
                                             extra, rss1))
    finally:
        cleanup(one)
        cleanup(four)


def test_mappings_of_fifos_and_devices_are_never_opened():
    """MMAP2 records naming FIFOs (one with a build-id, one without) and
    a device node, with samples in each: the reader looks at them and
    opens none (inotify sees no open; an open of the first FIFO without
    O_NONBLOCK would hang the reader)."""
    d = tempfile.mkdtemp(prefix="perfspill-hostile-")
    fifo, fifo_bid = os.path.join(d, "fifo"), os.path.join(d, "fifo-bid")
    dev = os.path.join(d, "null")
    os.mkfifo(fifo)
    os.mkfifo(fifo_bid)
    if os.geteuid() == 0:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        dev = "/dev/null"
    path = os.path.join(d, "special.data")
    with open(path, "wb") as f:
        f.write(hostile.special_files(fifo, fifo_bid, dev))
    ino = watch_opens(d)
    try:
        opened(ino)
        rc, out, err, _, _ = run_flame(path, "-f", "-")
        assert rc == 0, err
        assert harness.folded(out) == {"special;[fifo]": 1,
                                       "special;[fifo-bid]": 1,
                                       "special;[null]": 1}, out
        names = opened(ino)
        assert "special.data" in names, names     # the watch works
        for n in ("fifo", "fifo-bid", "null"):
            assert n not in names, "the reader opened %s: %s" % (n, names)
    finally:
        os.close(ino)
        for n in os.listdir(d):
            os.unlink(os.path.join(d, n))
        os.rmdir(d)


if __name__ == "__main__":
    harness.main(globals())

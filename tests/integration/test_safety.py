"""The output directory under an operator's mistakes: a second daemon on
it, the directory removed while recording, and a min_free that removing
files cannot reach. No finished file is lost to any of them, and what is
lost is counted and reported."""
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile

import harness
from harness import Daemon, perf_valid, wait_for, Skip, need_tp, syscalls

TP = "raw_syscalls:sys_enter"


def snapshot(out):
    """Every entry of the directory: name -> (inode, size, mtime)."""
    r = {}
    for n in os.listdir(out):
        st = os.stat(os.path.join(out, n))
        r[n] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return r


class Tmpfs:
    """A small filesystem of its own for the output directory."""

    def __init__(self, size):
        self.top = tempfile.mkdtemp(prefix="perfspill-tmpfs-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size,
                            "tmpfs", self.top])
        if r.returncode != 0:
            os.rmdir(self.top)
            raise Skip("cannot mount a tmpfs here")
        self.out = os.path.join(self.top, "out")

    def free(self):
        sv = os.statvfs(self.top)
        return sv.f_bavail * sv.f_frsize

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.top])
        os.rmdir(self.top)


def second_daemon(d, sock):
    """Another perfspilld on d's output directory with its own socket,
    once it has exited or listens."""
    p = subprocess.Popen(
        [harness.PERFSPILLD, "-f", "--socket", sock, "--output-dir", d.out,
         "-c", os.path.join(os.path.dirname(__file__), "empty.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: p.poll() is not None or os.path.exists(sock),
             what="the second daemon to exit or listen")
    return p


def test_second_daemon_on_the_output_dir_changes_nothing():
    """A second perfspilld on the same output directory (its own socket)
    must not salvage the first one's growing .partial, nor apply its
    retention: it exits at once, naming the daemon that holds the
    directory, and the directory is as it was."""
    with Daemon() as d:
        d.ctl("start", "-F", "99", "--max-files", "1")
        d.ctl("rotate")
        wait_for(lambda: len(d.finished_files()) == 1, what="a finished file")
        d.ctl("rotate")
        wait_for(lambda: d.status()["totals"]["files_finished"] == 2,
                 what="a second finished file")
        partial = d.status()["file"]["name"]
        for i in range(25):
            before = snapshot(d.out)
            sock = os.path.join(d.dir, "second-%d.sock" % i)
            p = second_daemon(d, sock)
            after = snapshot(d.out)
            if p.poll() is None:
                p.kill()
            out, err = p.communicate()
            # the first daemon keeps writing its .partial meanwhile: only
            # its size and time may move, under the same name and inode
            assert set(after) == set(before), (i, before, after)
            for n, (ino, size, mtime) in before.items():
                assert after[n][0] == ino, n
                if n != partial:
                    assert after[n] == before[n], n
            assert partial in after
            assert not os.path.exists(sock), "a second daemon started"
            assert p.returncode != 0, (i, out, err)
            assert "in use by another perfspilld (pid %d)" % d.proc.pid \
                in err, err
        lock = os.path.join(d.out, ".perfspilld.lock")
        assert open(lock).read().strip() == str(d.proc.pid)
        assert "salvage" not in d.read_log()
        # the lock file is no trace file: status counts the one there is
        assert d.status()["files"]["count"] == 1, d.status()["files"]
        rc, rep = d.ctl("stop")
        assert rep["data"]["file"] + ".partial" == partial
        files = d.finished_files()
        assert len(files) == 1
        perf_valid(files[0])


def test_lock_file_removed_still_keeps_a_second_daemon_out():
    """The lock is the directory's own, not only its lock file's: with
    .perfspilld.lock removed (an operator cleaning up hidden files) a
    second daemon still finds the directory taken and leaves the first
    one's growing .partial alone."""
    with Daemon() as d:
        d.ctl("start", "-F", "99")
        partial = d.status()["file"]["name"]
        os.unlink(os.path.join(d.out, ".perfspilld.lock"))
        sock = os.path.join(d.dir, "second.sock")
        p = second_daemon(d, sock)
        if p.poll() is None:
            p.kill()
        out, err = p.communicate()
        assert p.returncode != 0 and not os.path.exists(sock), (out, err)
        assert "in use by another perfspilld" in err, err
        # its pid found from the directory's lock, and no lock file left
        assert "(pid %d)" % d.proc.pid in err, err
        assert ".perfspilld.lock" not in os.listdir(d.out), os.listdir(d.out)
        assert partial in os.listdir(d.out), os.listdir(d.out)
        assert "salvage" not in err, err
        rc, rep = d.ctl("stop")
        assert rep["data"]["file"] + ".partial" == partial
        perf_valid(rep["data"]["file"] if os.path.isabs(rep["data"]["file"])
                   else os.path.join(d.out, rep["data"]["file"]))


def test_fifo_named_like_a_trace_file_does_not_hang_start_up():
    """Issue 25.5: salvage opened a FIFO named perfspill-*.data (or
    .data.partial) for reading and start-up hung there for ever, before
    the socket listened. Now it is left alone and said so."""
    with Daemon(start=False) as d:
        os.makedirs(d.out, mode=0o750)
        fifos = ["perfspill-x-20250101T000000Z-000001.data",
                 "perfspill-x-20250101T000000Z-000002.data.partial"]
        for f in fifos:
            os.mkfifo(os.path.join(d.out, f))
        d.start()       # fails if the socket does not listen within 20 s
        d.ctl("ping", timeout=10)
        log = d.read_log()
        for f in fifos:
            assert "%s is not a regular file; left alone" % f in log, log
            assert stat.S_ISFIFO(os.lstat(os.path.join(d.out, f)).st_mode)


def test_reload_does_not_chmod_through_a_symlink_at_the_socket_path():
    """Issue 25.5: reload chmod'ed and chown'ed the socket by its path,
    following a symlink someone with write access to the socket's
    directory put there: root made the link's target 0666. Now only the
    socket the daemon bound is changed; a name that is no longer it is
    left alone, said so."""
    target = tempfile.NamedTemporaryFile(prefix="perfspill-target-",
                                         delete=False)
    target.close()
    os.chmod(target.name, 0o600)
    try:
        with Daemon(config={"socket_mode": "0600"}) as d:
            def reload_with(mode, what):
                with open(d.config, "w") as f:
                    json.dump({"socket_mode": mode}, f)
                n = d.read_log().count(what)
                d.proc.send_signal(signal.SIGHUP)
                wait_for(lambda: d.read_log().count(what) > n, what=what)
            # the socket itself: its mode follows the config
            reload_with("0660", "configuration reloaded")
            assert stat.S_IMODE(os.stat(d.sock).st_mode) == 0o660
            # its name swapped for a symlink to a file of root's
            os.rename(d.sock, d.sock + ".moved")
            os.symlink(target.name, d.sock)
            reload_with("0666", "configuration reloaded")
            assert "is no longer the socket this daemon bound" in \
                d.read_log(), d.read_log()
            st = os.stat(target.name)
            assert stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
            assert (st.st_uid, st.st_gid) == (0, 0), st
            assert d.alive()
    finally:
        os.unlink(target.name)


def test_output_dir_removed_pauses_counts_and_resumes():
    """The output directory removed under a recording: status says why it
    is paused, what the rings hold is counted as dropped instead of being
    written into files no one can reach, the daemon does not retry a
    rotation at every drain, recording resumes in the directory once it
    exists again (locked anew), and stop reports that files were lost."""
    need_tp()
    with Daemon() as d:
        d.ctl("start", "-e", TP, "--no-callgraph", "--rotate-size", "1M",
              "-m", "64")
        syscalls(20000)
        # rotations create files while it is being removed: retry until
        # the directory is gone (once paused, nothing new is created)
        for _ in range(100):
            try:
                shutil.rmtree(d.out)
                break
            except OSError:
                continue
        assert not os.path.exists(d.out)
        wait_for(lambda: d.status().get("paused") ==
                 "output directory removed", what="a pause")
        dropped = d.status()["totals"]["bytes_dropped"]
        syscalls(20000)
        st = d.status()
        assert st["totals"]["bytes_dropped"] > dropped, st["totals"]
        assert "file" not in st, st
        assert d.alive()
        log = d.read_log()
        assert log.count("paused: output directory removed") == 1, log
        # nothing is retried at every drain: one failed rotation at most
        assert log.count("cannot create a trace file") <= 1, log
        # back (as tmpfiles.d or an operator would make it): recording
        # resumes there by itself, under a new lock
        os.mkdir(d.out)
        wait_for(lambda: not d.status().get("paused"), timeout=120,
                 what="resume once the directory is back")
        name = os.path.join(d.out, d.status()["file"]["name"])
        # there, or already finished by a rotation
        assert os.path.exists(name) or \
            os.path.exists(name[:-len(".partial")]), name
        assert open(os.path.join(d.out, ".perfspilld.lock")).read().strip() \
            == str(d.proc.pid)
        syscalls(5000)
        rc, rep = d.ctl("stop", check=False)
        assert rc != 0, rep
        assert rep["error"]["code"] == "system-error", rep
        assert "removed while recording" in rep["error"]["message"], rep
        # the file written since the directory came back is whole
        files = d.finished_files()
        assert len(files) >= 1, os.listdir(d.out)
        for f in files:
            perf_valid(f, allow_lost=True)
        st = d.status()
        assert st["last_totals"]["bytes_dropped"] > 0, st
        # the next recording starts clean
        d.ctl("start", "-F", "99")
        rc, rep = d.ctl("stop")
        assert rc == 0 and os.path.exists(rep["data"]["path"]), rep


def test_output_dir_made_again_and_taken_by_another_daemon():
    """A directory removed under a recording, made again, and taken by a
    second daemon meanwhile: the first one stays paused and says why,
    writes nothing into it, and resumes there once the second is gone."""
    with Daemon() as d:
        d.ctl("start", "-F", "99")
        shutil.rmtree(d.out)
        wait_for(lambda: d.status().get("paused") ==
                 "output directory removed", what="a pause")
        os.mkdir(d.out)
        with Daemon(outdir=d.out) as d2:
            wait_for(lambda: "another perfspilld holds it" in
                     d.status().get("paused", ""), timeout=120,
                     what="the first daemon to see the second's lock")
            assert os.listdir(d.out) == [".perfspilld.lock"], \
                os.listdir(d.out)
            assert open(os.path.join(d.out, ".perfspilld.lock")).read() \
                .strip() == str(d2.proc.pid)
        wait_for(lambda: not d.status().get("paused"), timeout=120,
                 what="resume once the second daemon is gone")
        assert open(os.path.join(d.out, ".perfspilld.lock")).read() \
            .strip() == str(d.proc.pid)
        rc, rep = d.ctl("stop", check=False)
        assert rc != 0 and "removed" in rep["error"]["message"], rep
        files = d.finished_files()
        assert len(files) == 1, files
        perf_valid(files[0])


def test_output_dir_removed_while_idle_refuses_start():
    with Daemon() as d:
        shutil.rmtree(d.out)
        rc, rep = d.ctl("start", "-F", "99", check=False)
        assert rc != 0 and "was removed" in rep["error"]["message"], rep
        assert not os.path.exists(d.out)
        os.mkdir(d.out)
        d.ctl("start", "-F", "99")
        rc, rep = d.ctl("stop")
        assert os.path.exists(rep["data"]["path"]), rep


def finished_on(fs, n):
    """n small finished files on fs, by a daemon that is gone."""
    with Daemon(outdir=fs.out) as d:
        d.ctl("start", "-F", "99", "--max-files", "0", "--max-size", "0",
              "--min-free", "0")
        for i in range(1, n + 1):
            d.ctl("rotate")
            wait_for(lambda: d.status()["totals"]["files_finished"] == i,
                     what="finished file %d" % i)
        d.ctl("stop")
        d.stop_daemon()
    return sorted(f for f in os.listdir(fs.out) if f.endswith(".data"))


def test_min_free_out_of_reach_removes_nothing():
    """min_free above what removing every finished file can free: none is
    removed for it (the newest never is), recording pauses and says why.
    One it can reach: the oldest go first, no more than needed."""
    with Tmpfs("64m") as fs:
        files = finished_on(fs, 4)
        assert len(files) == 5, files
        sizes = {f: os.path.getsize(os.path.join(fs.out, f)) for f in files}
        with Daemon(config={"min_free": "1G"}, outdir=fs.out) as d:
            # the start-up retention has run once the socket listens
            for f in files:
                assert os.path.getsize(os.path.join(fs.out, f)) == sizes[f]
            assert "none removed for min_free" in d.read_log()
            assert "retention: removed" not in d.read_log()
            d.ctl("start", "-F", "99")
            wait_for(lambda: d.status().get("paused", "").startswith(
                "below min_free"), what="a pause for min_free")
            st = d.status()
            assert "min_free 1.0 GiB" in st["paused"], st
            rc, rep = d.ctl("stop")
            assert "retention: removed" not in d.read_log(), d.read_log()
            for f in files:
                assert os.path.getsize(os.path.join(fs.out, f)) == sizes[f]
        # reachable: the start-up retention of a daemon that writes
        # nothing before it, so that the free space is what we measure
        now = sorted(f for f in os.listdir(fs.out) if f.endswith(".data"))
        size = [os.path.getsize(os.path.join(fs.out, f)) for f in now]
        want = fs.free() + size[0] + size[1] // 2
        with Daemon(config={"min_free": want}, outdir=fs.out) as d:
            left = sorted(f for f in os.listdir(fs.out)
                          if f.endswith(".data"))
            assert left == now[2:], (now, left)
            log = d.read_log()
            for f, n in zip(now[:2], size[:2]):
                assert "retention: removed %s (%d bytes): " % (f, n) in log, \
                    log
            assert log.count("below min_free") == 2, log


if __name__ == "__main__":
    harness.main(globals())

"""The output directory under an operator's mistakes: a second daemon on
it. No file of the daemon that owns the directory is touched."""
import os
import subprocess

import harness
from harness import Daemon, perf_valid, wait_for


def snapshot(out):
    """Every entry of the directory: name -> (inode, size, mtime)."""
    r = {}
    for n in os.listdir(out):
        st = os.stat(os.path.join(out, n))
        r[n] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return r


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
            p = subprocess.Popen(
                [harness.PERFSPILLD, "-f", "--socket", sock, "--output-dir",
                 d.out, "-c", os.path.join(os.path.dirname(__file__),
                                           "empty.json")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for(lambda: p.poll() is not None or os.path.exists(sock),
                     what="the second daemon to exit or listen")
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
        rc, rep = d.ctl("stop")
        assert rep["data"]["file"] + ".partial" == partial
        files = d.finished_files()
        assert len(files) == 1
        perf_valid(files[0])


if __name__ == "__main__":
    harness.main(globals())

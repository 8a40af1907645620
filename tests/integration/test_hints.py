"""What a perf user types: perf record's option names that mean the same
are taken, those that differ are named ("--aio N is --cblocks N"), a typo
of a setting, option, command or comm gets "did you mean"; the changed
short flags say what they became; and the client says what happened when
there is no daemon (--json: on stdout too) or it goes away while status
--watch watches it (exit 4)."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Daemon, flame, main, PERFSPILLCTL, PERFSPILLD,  # noqa
                     SPINNER, wait_for)


def ctl(*args, sock="/nonexistent/perfspill.sock"):
    return subprocess.run([PERFSPILLCTL, "-s", sock] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_perf_option_names_are_named_where_ours_differ():
    cases = [(["--aio", "2"], "--cblocks N"),
             (["--aio=2"], "--cblocks N"),
             (["--switch-output=1h"], "--rotate-interval"),
             (["--overwrite"], "--mode flight"),
             (["-a"], "-C LIST"),
             (["--evnt", "cs"], "did you mean --event?"),
             (["--rotate-intervall", "1h"], "did you mean --rotate-interval?")]
    for args, hint in cases:
        p = ctl("start", *args)
        assert p.returncode == 2, (args, p)
        assert hint in p.stderr, (args, p.stderr)
    p = ctl("statsu")
    assert p.returncode == 2 and "did you mean 'status'?" in p.stderr, p


def test_perf_option_names_that_mean_the_same_are_taken():
    with Daemon() as d:
        d.ctl("start", "--count", "100000", "--mmap-pages", "8",
              "--realtime", "0", "--compression-level", "0", "-e", "cs")
        st = d.status()
        assert st["state"] == "recording", st
        d.ctl("stop")


def test_a_setting_typo_names_the_setting():
    with Daemon() as d:
        rc, rep = d.ctl("configure", "evnets=cs", check=False)
        assert rc == 1, rep
        assert rep["error"]["message"] == \
            "unknown setting 'evnets' (did you mean 'events'?)", rep


def test_json_without_a_daemon_prints_a_json_error():
    p = ctl("--json", "status")
    assert p.returncode == 3, p
    rep = json.loads(p.stdout)
    assert rep["ok"] is False and rep["error"]["code"] == "unreachable", rep
    assert "cannot connect" in rep["error"]["message"], rep


def test_status_watch_says_the_daemon_went_away():
    for js in ([], ["--json"]):
        d = Daemon()
        try:
            w = subprocess.Popen([PERFSPILLCTL, "-s", d.sock] + js +
                                 ["status", "-w", "0.2"],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1)       # a few refreshes; the verdict waits below
            d.stop_daemon(signal.SIGTERM)
            out, err = w.communicate(timeout=60)
        finally:
            d.cleanup()
        assert w.returncode == 4, (w.returncode, err)
        assert "perfspilld went away" in err, err
        assert "Broken pipe" not in err, err
        if js:
            last = json.loads(out.strip().splitlines()[-1])
            assert last["error"]["code"] == "gone", last


def test_flame_short_flags_and_typos():
    p = flame("-s", "5m", check=False)
    assert p.returncode == 2 and "--since DURATION" in p.stderr, p.stderr
    p = flame("-qr", check=False)
    assert p.returncode == 2 and "--reverse" in p.stderr, p.stderr
    p = flame("--sinse", "5m", check=False)
    assert p.returncode == 2 and "did you mean --since?" in p.stderr, \
        p.stderr


def test_flame_comm_typo_names_the_comm():
    spin = subprocess.Popen([SPINNER, "2"], stdout=subprocess.DEVNULL)
    try:
        with Daemon() as d:
            d.ctl("start", "-F", "499", "-e", "cpu-clock")
            spin.wait()
            d.ctl("stop")
            p = flame("-q", "--comm", "spinne", "-f", "-", d.out,
                      check=False)
            assert p.returncode == 1, p
            assert "did you mean --comm spinner?" in p.stderr, p.stderr
            p = flame("-q", "--comm", "spinner", "-f", "-", d.out)
            assert "spin_alpha" in p.stdout
            # -P alone writes the profile only, as --help says
            cwd = os.getcwd()
            os.chdir(d.dir)
            try:
                flame("-q", "-P", "p.pb.gz", d.out)
            finally:
                os.chdir(cwd)
            assert os.path.getsize(os.path.join(d.dir, "p.pb.gz")) > 0
            assert not os.path.exists(os.path.join(d.dir, "flame.svg"))
    finally:
        spin.wait()


def test_a_start_refused_for_a_busy_socket_creates_nothing():
    with Daemon() as d:
        out = os.path.join(d.dir, "second-out")
        p = subprocess.run([PERFSPILLD, "-f", "--socket", d.sock,
                            "--output-dir", out, "-c",
                            os.path.join(os.path.dirname(__file__),
                                         "empty.json")],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0, p
        assert "another perfspilld is already listening" in p.stderr, p
        assert not os.path.exists(out), os.listdir(out)
        assert d.ctl("ping")[0] == 0


def progress_lines(cols, args, env_cols=None):
    """perfspill-flame's stderr on a pseudo-terminal cols wide: each
    line it drew, control sequences taken out."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols,
                                                        0, 0))
    env = dict(os.environ)
    if env_cols:
        env["COLUMNS"] = str(env_cols)
    p = subprocess.Popen([os.path.join(os.path.dirname(PERFSPILLCTL),
                                       "perfspill-flame")] + args,
                         stderr=slave, stdout=subprocess.DEVNULL, env=env)
    os.close(slave)
    buf = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    p.wait()
    os.close(master)
    text = buf.decode(errors="replace").replace("\x1b[K", "")
    return [seg for seg in re.split(r"[\r\n]", text) if seg], p.returncode


def test_flame_progress_fits_the_terminal():
    """On an 80-column terminal a progress line (a trace file's name is
    41 characters) stays within 79, and so on a 40-column one."""
    spin = subprocess.Popen([SPINNER, "1"], stdout=subprocess.DEVNULL)
    try:
        with Daemon() as d:
            d.ctl("start", "-F", "499", "-e", "cpu-clock")
            d.ctl("rotate")
            spin.wait()
            d.ctl("stop")
            for cols in (80, 60, 30):
                lines, rc = progress_lines(cols, ["--no-companion", "-o",
                                                  os.path.join(d.dir,
                                                               "x.svg"),
                                                  d.out])
                assert rc == 0, lines
                shown = [l for l in lines if "samples" in l and
                         "wrote" not in l]
                assert shown, lines
                assert max(len(l) for l in shown) < cols, (cols, lines)
                if cols == 60:
                    # the name cut keeps its end: time and sequence
                    assert all(l.startswith("[") and re.search(
                        r"\.\.\.\S*Z-\d{6}\.data: ", l)
                        for l in shown), shown
    finally:
        spin.wait()


SECS_KEYS = ("window", "rotate_interval", "trigger_interval",
             "snapshot_interval", "session_duration", "client_timeout",
             "metrics_interval", "on_finish_timeout", "on_finish_retry")


def test_status_gives_every_duration_its_unit():
    with Daemon(config={"on_finish_retry": 30}) as d:
        d.ctl("start", "-e", "cs")
        p = subprocess.run([PERFSPILLCTL, "-s", d.sock, "status"],
                           capture_output=True, text=True, timeout=60)
        d.ctl("stop")
    words = dict(w.split("=", 1) for w in p.stdout.split() if "=" in w)
    seen = [k for k in SECS_KEYS if k in words]
    assert "snapshot_interval" in seen, words
    for k in seen:
        assert re.fullmatch(r"\d+[smhd]", words[k]), (k, words[k])


if __name__ == "__main__":
    main(globals())

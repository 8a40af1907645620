"""Metrics: `perfspillctl metrics` and the metrics_file for node_exporter's
textfile collector, read by a real Prometheus text parser (the
prometheus_client package's, Debian's python3-prometheus-client) and held
against perf's own count of what the files contain, and linted by
Prometheus' own promtool (check metrics) in every state.
"""
import json
import os
import re
import shutil
import subprocess
import time

import harness
from harness import Daemon, Skip, wait_for
from test_safety import Tmpfs

# Debian's parser lives in the system Python, not in a pyenv one
PARSER_PY = "/usr/bin/python3"
PARSE = r"""
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = {}
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        key = s.name + "".join("{%s=%s}" % kv for kv in sorted(s.labels.items()))
        out[key] = {"type": fam.type, "value": s.value}
print(json.dumps(out))
"""


def parse(text):
    """The samples of an exposition text, {name{label=value}: {type,
    value}}; a text the parser rejects fails the test."""
    if not os.access(PARSER_PY, os.X_OK):
        raise Skip("no %s for python3-prometheus-client" % PARSER_PY)
    p = subprocess.run([PARSER_PY, "-c", PARSE], input=text,
                       capture_output=True, text=True)
    if "No module named 'prometheus_client'" in p.stderr:
        raise Skip("python3-prometheus-client is not installed")
    assert p.returncode == 0, "the Prometheus parser rejected:\n%s\n%s" % (
        text, p.stderr)
    return json.loads(p.stdout)


def metrics_text(d):
    p = subprocess.run([harness.PERFSPILLCTL, "-s", d.sock, "metrics"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def value(m, key):
    assert key in m, "%s missing from %s" % (key, sorted(m))
    return m[key]["value"]


COUNTERS = ["perfspill_samples_total", "perfspill_lost_total",
            "perfspill_lost_samples_total", "perfspill_files_finished_total",
            "perfspill_files_removed_total", "perfspill_recordings_total",
            "perfspill_self_excluded_total",
            "perfspill_compact_unwound_samples_total",
            "perfspill_compact_raw_samples_total",
            'perfspill_bytes_total{result=written}',
            'perfspill_bytes_total{result=dropped}',
            'perfspill_handoffs_total{result=ok}',
            'perfspill_handoffs_total{result=failed}']


def test_metrics_parse_and_count_what_perf_counts():
    with Daemon(config={"rotate_size": 0, "rotate_interval": 0,
                        "max_files": 0, "max_size": 0, "min_free": 0}) as d:
        m0 = parse(metrics_text(d))
        promtool(metrics_text(d))
        for k in COUNTERS:
            assert value(m0, k) == 0, (k, m0[k])
        assert m0["perfspill_samples_total"]["type"] == "counter"
        assert m0["perfspill_aio_inflight"]["type"] == "gauge"
        assert value(m0, "perfspill_recording") == 0
        assert value(m0, "perfspill_start_time_seconds") <= time.time()

        files = []
        seen = []
        for _ in range(2):      # a stop and a start reset nothing
            d.ctl("start", "-e", "cpu-clock", "-F", "999")
            sp = harness.spinner(1.0)
            sp.wait()
            m = parse(metrics_text(d))
            assert value(m, "perfspill_recording") == 1
            _, rep = d.ctl("stop")
            files.append(rep["data"]["path"])
            seen.append(parse(metrics_text(d)))
        a, b = seen
        for k in COUNTERS:
            assert value(b, k) >= value(a, k), (k, value(a, k), value(b, k))
        assert value(b, "perfspill_recordings_total") == 2
        assert value(b, "perfspill_files_finished_total") == 2
        assert value(b, "perfspill_recording") == 0
        assert value(b, "perfspill_aio_inflight") == 0
        # what perf finds in the files, and what is there on disk
        in_files = sum(harness.perf_valid(f) for f in files)
        assert value(b, "perfspill_samples_total") == in_files, \
            (value(b, "perfspill_samples_total"), in_files)
        assert in_files > value(a, "perfspill_samples_total") > 0
        on_disk = sum(os.path.getsize(f) for f in files)
        assert value(b, "perfspill_bytes_total{result=written}") <= on_disk


def test_retention_removals_are_counted():
    with Daemon(config={"max_files": 1, "rotate_size": 0,
                        "rotate_interval": 0, "max_size": 0,
                        "min_free": 0}) as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99")
        for _ in range(3):
            d.ctl("rotate")
        d.ctl("stop")
        m = parse(metrics_text(d))
        assert len(d.finished_files()) == 1, d.finished_files()
        assert value(m, "perfspill_files_finished_total") == 4
        assert value(m, "perfspill_files_removed_total") == 3


PAUSE_REASONS = ["disk_full", "min_free", "output_dir_removed",
                 "write_error"]


def paused_series(m):
    return sorted(k for k in m if k.startswith("perfspill_paused"))


def test_paused_keeps_one_series_per_reason():
    """A pause changes a value, never which series exist: an alert on
    perfspill_paused and a graph of it follow the same series before,
    during and after (once reason="" 0, then reason="below min_free: 3.1
    GiB free, ..." 1, its figures changing as the disk fills)."""
    want = sorted("perfspill_paused{reason=%s}" % r for r in PAUSE_REASONS)
    with Daemon(config={"rotate_interval": 0}) as d:
        idle = parse(metrics_text(d))
        assert paused_series(idle) == want, paused_series(idle)
        assert all(value(idle, k) == 0 for k in want)
        d.ctl("start", "-e", "cpu-clock", "-F", "99")
        running = parse(metrics_text(d))
        assert paused_series(running) == want, paused_series(running)
        assert all(value(running, k) == 0 for k in want)
        # more free space asked for than any file system has: a pause
        d.ctl("configure", "min_free=1024T")
        wait_for(lambda: d.status().get("paused"), what="a pause")
        m = parse(metrics_text(d))
        assert paused_series(m) == want, paused_series(m)
        assert value(m, "perfspill_paused{reason=min_free}") == 1
        assert [k for k in want if value(m, k) == 1] == \
            ["perfspill_paused{reason=min_free}"], m
        assert "min_free" in d.status()["paused"]     # the words: status
        promtool(metrics_text(d))
        d.ctl("configure", "min_free=0")
        wait_for(lambda: not d.status().get("paused"), what="resuming")
        m = parse(metrics_text(d))
        assert paused_series(m) == want and all(
            value(m, k) == 0 for k in want), m
        d.ctl("stop")


def test_pause_reasons_of_a_full_disk_and_a_removed_directory():
    """A real full disk (a 6 MiB tmpfs filled by the syscall tracepoint)
    sets reason disk_full, a removed output directory output_dir_removed;
    the other reasons stay 0, the series stay the same four."""
    harness.need_tp()
    want = sorted("perfspill_paused{reason=%s}" % r for r in PAUSE_REASONS)

    def only(m, reason):
        assert paused_series(m) == want, paused_series(m)
        on = [k for k in want if value(m, k) == 1]
        assert on == ["perfspill_paused{reason=%s}" % reason], on
    with Tmpfs("6m") as fs:
        with Daemon(outdir=fs.out) as d:
            d.ctl("start", "-e", "raw_syscalls:sys_enter", "--no-callgraph",
                  "--rotate-size", "1M", "--max-files", "0", "--max-size",
                  "0", "--min-free", "0", "-m", "256")
            for _ in range(20):
                harness.syscalls(10000)
                if d.status().get("paused"):
                    break
            assert d.status().get("paused") == "disk full", d.status()
            only(parse(metrics_text(d)), "disk_full")
            promtool(metrics_text(d))
            d.ctl("stop", check=False)
    with Daemon() as d:
        d.ctl("start", "-F", "99")
        shutil.rmtree(d.out)
        wait_for(lambda: d.status().get("paused") ==
                 "output directory removed", what="a pause")
        only(parse(metrics_text(d)), "output_dir_removed")
        promtool(metrics_text(d))
        d.ctl("stop", check=False)


def promtool(text):
    """Prometheus' own check of an exposition text: what a scraper
    refuses and names against its conventions. scripts/deps installs it
    (Debian's prometheus): missing, the test fails rather than skips."""
    tool = shutil.which("promtool") or "/usr/bin/promtool"
    assert os.access(tool, os.X_OK), \
        "promtool not installed: scripts/deps installs Debian's prometheus"
    p = subprocess.run([tool, "check", "metrics"], input=text,
                       capture_output=True, text=True)
    assert p.returncode == 0, "promtool check metrics:\n%s%s\n%s" % (
        p.stdout, p.stderr, text)


def test_promtool_accepts_every_state():
    """Idle, recording, an on-demand session beside it, stopping and
    starting again: every page passes promtool check metrics."""
    with Daemon(config={"rotate_interval": 0}) as d:
        promtool(metrics_text(d))
        d.ctl("start", "-e", "cpu-clock", "-F", "99")
        promtool(metrics_text(d))
        d.ctl("start", "--session", "deep", "--duration", "60", "-F", "49",
              "-m", "16")
        d.ctl("rotate")
        promtool(metrics_text(d))
        d.ctl("stop", "--session", "deep")
        d.ctl("stop")
        promtool(metrics_text(d))


def test_directory_gauges_match_the_files():
    """Retained files and bytes, free space and the time of the newest
    finished file, against the directory itself; the time survives a
    restart of the daemon (a staleness alert must not see a new daemon
    as a fresh file), and a new file moves it."""
    with Tmpfs("64M") as fs:
        cfg = {"rotate_interval": 0, "min_free": 0}
        with Daemon(config=cfg, outdir=fs.out) as d:
            m = parse(metrics_text(d))
            assert value(m, "perfspill_retained_files") == 0
            assert value(m, "perfspill_retained_bytes") == 0
            assert value(m, "perfspill_last_file_finished_timestamp_seconds") \
                == 0
            d.ctl("start", "-e", "cpu-clock", "-F", "99")
            d.ctl("rotate")
            d.ctl("rotate")
            d.ctl("stop")
            files = d.finished_files()
            assert len(files) == 3, files
            m = parse(metrics_text(d))
            assert value(m, "perfspill_retained_files") == 3
            assert value(m, "perfspill_retained_bytes") == \
                sum(os.path.getsize(f) for f in files)
            # nothing writes on this tmpfs now but the daemon, idle
            assert value(m, "perfspill_disk_free_bytes") == fs.free()
            newest = max(int(os.stat(f).st_mtime) for f in files)
            assert value(m, "perfspill_last_file_finished_timestamp_seconds") \
                == newest
            # status says the same
            st = d.status()
            assert st["files"]["count"] == 3
            assert st["files"]["last_finished"] == newest
            promtool(metrics_text(d))
        with Daemon(config=cfg, outdir=fs.out) as d:
            m = parse(metrics_text(d))
            assert value(m, "perfspill_retained_files") == 3
            assert value(m, "perfspill_last_file_finished_timestamp_seconds") \
                == newest
            # a file finished a second later at the earliest moves it on
            wait_for(lambda: int(time.time()) > newest, what="a new second")
            d.ctl("start", "-e", "cpu-clock", "-F", "99")
            d.ctl("stop")
            m = parse(metrics_text(d))
            assert value(m, "perfspill_retained_files") == 4
            assert value(m, "perfspill_last_file_finished_timestamp_seconds") \
                > newest


def test_metrics_file_for_the_textfile_collector():
    with Daemon(start=False) as d:
        prom_dir = os.path.join(d.dir, "textfile")
        os.mkdir(prom_dir)
        prom = os.path.join(prom_dir, "perfspill.prom")
        d.config = os.path.join(d.dir, "perfspilld.json")
        with open(d.config, "w") as f:
            json.dump({"metrics_file": prom, "metrics_interval": 1}, f)
        d.start()
        # written at start, then again every second, always whole
        wait_for(lambda: os.path.exists(prom), what=prom)
        m = parse(open(prom).read())
        assert value(m, "perfspill_recording") == 0
        d.ctl("start", "-e", "cpu-clock", "-F", "99")

        def recording():
            return value(parse(open(prom).read()),
                         "perfspill_recording") == 1
        wait_for(recording, what="metrics_file to show the recording")
        assert os.listdir(prom_dir) == ["perfspill.prom"], \
            os.listdir(prom_dir)    # no temporary file left beside it
        d.ctl("stop")
        assert d.stop_daemon() == 0
        # the last write, at exit, says nothing records any more
        m = parse(open(prom).read())
        assert value(m, "perfspill_recording") == 0
        assert value(m, "perfspill_recordings_total") == 1


def test_metrics_file_in_a_missing_directory_is_logged_once():
    with Daemon(start=False) as d:
        prom = os.path.join(d.dir, "nowhere", "perfspill.prom")
        d.config = os.path.join(d.dir, "perfspilld.json")
        with open(d.config, "w") as f:
            json.dump({"metrics_file": prom, "metrics_interval": 1}, f)
        d.start()
        time.sleep(3.5)         # at least three failed writes
        assert d.alive()
        log = d.read_log()
        assert log.count("metrics_file") == 1, log
        os.mkdir(os.path.dirname(prom))
        wait_for(lambda: os.path.exists(prom), what=prom)
        wait_for(lambda: "written again" in d.read_log(),
                 what="the recovery to be logged")


SRC = os.path.join(os.path.dirname(__file__), "..", "..")
# the README's first screen leads to the guide, which gives the rule
GUIDE = [os.path.join(SRC, "README.md"), os.path.join(SRC, "docs",
                                                      "guide.md")]


def readme_rule():
    """The staleness rule the README or its guide gives, as written."""
    text = ""
    for path in GUIDE:
        with open(path) as f:
            text += " " + " ".join(f.read().split())
    m = re.search(r"`(time\(\) - perfspill_data_on_disk_timestamp_seconds "
                  r"> \d+)`", text)
    assert m, "neither README nor docs/guide.md gives a staleness rule " \
        "on the data_on_disk gauge"
    return m.group(1)


def rule_fires(tmp, expr, series):
    """promtool test rules: which of series ({instance: (start, step per
    minute)}, the gauge's value at time 0 and its growth) the alert on
    expr fires for at 10 minutes and at 3 hours (promtool's time() counts
    from 0)."""
    tool = shutil.which("promtool") or "/usr/bin/promtool"
    assert os.access(tool, os.X_OK), "promtool not installed"
    rules = os.path.join(tmp, "rules.yml")
    with open(rules, "w") as f:
        f.write("groups:\n- name: perfspill\n  rules:\n  - alert: Stale\n"
                "    expr: %s\n" % expr)
    fired = {}
    for name, (start, step) in series.items():
        for at in ("10m", "3h"):
            test = os.path.join(tmp, "test.yml")
            with open(test, "w") as f:
                f.write("rule_files: [%s]\nevaluation_interval: 1m\ntests:\n"
                        "- interval: 1m\n  input_series:\n  - series: "
                        "'%s{instance=\"%s\"}'\n    values: '%d+%dx200'\n"
                        "  alert_rule_test:\n  - eval_time: %s\n"
                        "    alertname: Stale\n    exp_alerts: []\n" % (
                            rules, expr.split()[2], name, start, step, at))
            p = subprocess.run([tool, "test", "rules", test],
                               capture_output=True, text=True)
            # exp_alerts [] passes when nothing fires
            fired[(name, at)] = p.returncode != 0
            if p.returncode != 0:
                assert "exp:" in p.stdout + p.stderr, p.stdout + p.stderr
    return fired


def test_staleness_rule_does_not_fire_on_a_new_host():
    """The gauges of a daemon just started (idle, then recording) put
    into the README's rule by promtool test rules: a new host whose gauge
    moves on as data lands never fires; one whose data stopped reaching
    the disk fires within minutes. The old gauge,
    last_file_finished_timestamp_seconds, is 0 on that new host until
    the first rotation: a rule on it would have fired at once."""
    with Daemon() as d:
        ages = {}
        m = parse(metrics_text(d))
        ages["idle"] = time.time() - value(
            m, "perfspill_data_on_disk_timestamp_seconds")
        d.ctl("start", "-e", "cpu-clock", "-F", "999")
        harness.spinner(0.5).wait()
        m = parse(metrics_text(d))
        ages["recording"] = time.time() - value(
            m, "perfspill_data_on_disk_timestamp_seconds")
        assert value(m, "perfspill_last_file_finished_timestamp_seconds") \
            == 0
        assert value(m, "perfspill_session_data_on_disk_timestamp_seconds"
                     "{session=default}") > 0
        promtool(metrics_text(d))
        d.ctl("stop")
        expr = readme_rule()
        # the gauge as this daemon gave it, moving on as a recording's does
        series = {k: (-int(a), 60) for k, a in ages.items()}
        series["stopped"] = (0, 0)
        fired = rule_fires(d.dir, expr, series)
        print("ages at start: %s; %s fires for %s" % (
            {k: round(a, 1) for k, a in ages.items()}, expr,
            sorted(k for k, v in fired.items() if v)))
        for k in ages:
            assert not fired[(k, "10m")] and not fired[(k, "3h")], fired
        assert fired[("stopped", "10m")] and fired[("stopped", "3h")]
        old = rule_fires(d.dir, "time() - perfspill_last_file_finished_"
                         "timestamp_seconds > 7200", {"new": (0, 0)})
        assert old[("new", "3h")], old


harness.main(globals())

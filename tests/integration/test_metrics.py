"""Metrics: `perfspillctl metrics` and the metrics_file for node_exporter's
textfile collector, read by a real Prometheus text parser (the
prometheus_client package's, Debian's python3-prometheus-client) and held
against perf's own count of what the files contain.
"""
import json
import os
import subprocess
import time

import harness
from harness import Daemon, Skip, wait_for

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
            'perfspill_bytes_total{result=written}',
            'perfspill_bytes_total{result=dropped}',
            'perfspill_handoffs_total{result=ok}',
            'perfspill_handoffs_total{result=failed}']


def test_metrics_parse_and_count_what_perf_counts():
    with Daemon(config={"rotate_size": 0, "rotate_interval": 0,
                        "max_files": 0, "max_size": 0, "min_free": 0}) as d:
        m0 = parse(metrics_text(d))
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


def test_paused_reason_is_a_label():
    # more free space asked for than any file system has: pause at once
    with Daemon(config={"min_free": "1024T", "rotate_interval": 0}) as d:
        d.ctl("start", "-e", "cpu-clock", "-F", "99")
        wait_for(lambda: d.status().get("paused"), what="a pause")
        m = parse(metrics_text(d))
        paused = [k for k in m if k.startswith("perfspill_paused{")]
        assert len(paused) == 1 and "min_free" in paused[0], paused
        assert m[paused[0]]["value"] == 1
        d.ctl("stop", check=False)


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


harness.main(globals())

"""results.json: written as a run goes, and the matrices of other runs'
results (--also) joined into this one's."""
import json
import os

from .common import BENCH


def merge_also(args, results):
    """The matrices of other runs (--also DIR), named by their storage, in
    results["matrix"]; what those runs were, in results["also"]."""
    results["also"] = []
    for d in args.also:
        with open(os.path.join(d, "results.json")) as f:
            other = json.load(f)
        a = other["args"]
        where = []
        if a.get("slow_storage"):
            bw, lat = a["slow_storage"]
            where.append("slowfs %.0f MiB/s, %d us a write" % (
                bw / 1048576, lat))
        if a.get("dirty_pressure"):
            where.append("%.1f GB of dirty pressure" % (
                a["dirty_pressure"] / 1e9))
        where = ", ".join(where) or "page cache"
        for key, M in (other.get("matrix") or {}).items():
            M = dict(M)
            M["title"] = "%s (%s)" % (M["title"], where)
            M["from_also"] = os.path.abspath(d)   # not saved with this
            # run's results; its plots are drawn from there
            results.setdefault("matrix", {})["%s, %s" % (key, where)] = M
        om = other["machine"]
        results["also"].append({
            "dir": os.path.relpath(d, BENCH), "command": other["command"],
            "date": om["date"], "git_head": om.get("git_head"),
            "where": where, "elapsed_s": other.get("elapsed_s", 0)})


def save(args, results):
    own = dict(results)
    own.pop("also", None)
    if results.get("matrix"):
        own["matrix"] = {k: M for k, M in results["matrix"].items()
                         if not M.get("from_also")}
        if not own["matrix"]:
            del own["matrix"]
    with open(os.path.join(args.output, "results.json"), "w") as f:
        json.dump(own, f, indent=1, default=str)

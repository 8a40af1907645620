"""The comparisons: every load of --loads recorded by perfspilld, perf
--aio and perf serial and unprofiled, in rounds whose order rotates."""
from .common import log
from .count import describe_run, finish_run
from .load import experiments
from .results import save
from .stats import median
from .table import print_load_table


def run_comparisons(args, bench, loads, results):
    exps = [e for e in experiments(args, bench) if e[0] in args.loads]
    for key, title, lkey, spec, n in exps:
        load = loads[lkey]
        log("== %s: %s; %s x %d" % (key, title, load.unit, load.batch))
        runs = []
        kinds = [("none", None), ("perfspilld", n), ("perf-aio", n),
                 ("perf-serial", 0)]
        for r in range(args.runs):
            order = kinds[r % len(kinds):] + kinds[:r % len(kinds)]
            for kind, arg in order:
                try:
                    if kind == "none":
                        res = bench.run_none(load)
                    elif kind == "perfspilld":
                        res = bench.run_psd(load, spec, arg)
                    else:
                        res = bench.run_perf(load, spec, arg)
                except Exception as e:      # keep going; report it
                    res = {"recorder": kind, "error": str(e)[-600:]}
                res["round"] = r
                runs.append(res)
                log("  %-11s round %d: %s" % (kind, r, describe_run(res)))
        base = median([x.get("load_s") for x in runs
                       if x["recorder"] == "none"])
        for x in runs:
            finish_run(x, base)
        results["loads"][key] = {
            "title": title, "load": load.title, "load_key": lkey,
            "batch": load.batch, "unit": load.unit, "n": n,
            "spec": spec.describe(), "shipped": spec.shipped,
            "perf_argv": {"aio": " ".join(["perf", "record"] +
                                          spec.perf_args(n)),
                          "serial": " ".join(["perf", "record"] +
                                             spec.perf_args(0))},
            "psd_args": " ".join(["perfspillctl", "start"] +
                                 spec.psd_args(n)) if not spec.shipped else
            "perfspillctl start  (conf/perfspilld.json as shipped)",
            "baseline_s": base, "runs": runs}
        print_load_table(results["loads"][key])
        save(args, results)

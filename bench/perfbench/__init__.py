"""perfbench: the benchmark of perfspilld against perf record, behind
bench/run and bench/headline (bench/README.md says what they measure).

One module a job, the lower ones first: common (paths, logging, child
processes), stats (medians, min..max, ratios, verdicts), sample (/proc:
CPU, status, the page cache), machine (the machine and the binaries),
count (counting the trace files: the figures of one run), recorder
(running a recorder on a load), load (the loads and the experiments),
compare, sweep, matrix and writepath (the runs of each mode and their
tables), table (the load tables), targets (what a run found), results
(results.json), report (RESULTS.md), plot (its PNGs), options (bench/run's
command line), main (bench/run's main) and headline (bench/headline).
"""

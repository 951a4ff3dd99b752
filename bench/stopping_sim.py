"""The stopping rule of verify (src/stats/stopping.cpp) simulated on normal noise: for each design,
how often an A/A verify ends decisive under the seed's rule, and how often and how soon a true
difference of 3.3, 4.5, 7, 10 and 20 standard deviations (of one run) is found. A design: the
decisive factor D and the futile factor F (each a multiple of the seed's threshold, from 3 pairs),
and the stop after one ABBA cycle (2 pairs): decisive past E x the threshold and an effect of at
least `floor` SD (3x the spread between processes, where calibrate measured it and it matches a
run's SD; 0 where it was not measured). Prints one line per design; needs numpy.

    /usr/bin/python3 bench/stopping_sim.py

docs/measurement.md ("The verdict rule, and stopping early") quotes its figures.
"""
import numpy as np

rng = np.random.default_rng(3)
EFFECTS = (3.3, 4.5, 7, 10, 20)


def run(delta, D, F, E, floor, nmax=10, trials=20000):
    """(share decisive, mean pairs) over `trials` verifies with a true difference of delta SD."""
    B = rng.standard_normal((trials, nmax))
    C = rng.standard_normal((trials, nmax)) - delta
    dec = pairs = 0
    for t in range(trials):
        b, c = B[t], C[t]
        for n in range(2, nmax + 1):
            bb, cc = b[:n], c[:n]
            diff = abs(bb.mean() - cc.mean())
            thr = 2 * np.sqrt(bb.var(ddof=1) / n + cc.var(ddof=1) / n)
            fast = n == 2 and E > 0 and diff > E * thr and diff >= floor
            if n == nmax or fast or (n >= 3 and (diff > D * thr or diff < F * thr)):
                dec += diff > thr
                pairs += n
                break
    return dec / trials, pairs / trials


DESIGNS = [  # label, D, F, E, floor
    ("from 3 pairs only", 2.5, 1.0, 0, 0),
    ("default, spread measured (2 pairs: 5x, 3 SD)", 2.5, 1.0, 5, 3),
    ("default, spread not measured (2 pairs: 10x)", 2.5, 1.0, 10, 0),
    ("2 pairs at 2.5x, no floor", 2.5, 1.0, 2.5, 0),
    ("2 pairs at 5x, no floor", 2.5, 1.0, 5, 0),
    ("2 pairs at 5x, spread under-measured by 2x (1.5 SD)", 2.5, 1.0, 5, 1.5),
]
for label, D, F, E, floor in DESIGNS:
    aa = run(0, D, F, E, floor, trials=40000)
    rows = [run(d, D, F, E, floor, trials=3000) for d in EFFECTS]
    print("%-52s A/A decisive %.4f (pairs %.2f) | " % (label, aa[0], aa[1])
          + " ".join("%gSD %.3f/%.2f" % (d, x[0], x[1]) for d, x in zip(EFFECTS, rows)), flush=True)

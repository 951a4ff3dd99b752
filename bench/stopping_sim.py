"""The stopping rule of verify (src/stats/stopping.cpp) simulated on normal noise: for each design
(decisive factor D, futile factor F, the fewest pairs for each), how often an A/A verify ends
decisive under the seed's rule, and how often and how soon a true difference of 3.3, 4.5, 7 and
10 standard deviations (of one run) is found. Prints one line per design; needs numpy.

    /opt/hotkernel-dev/torch2/bin/python bench/stopping_sim.py

docs/measurement.md ("The verdict rule, and stopping early") quotes its figures.
"""
import numpy as np
rng=np.random.default_rng(3)
def run(delta, D, F, minD, minF, nmax=10, trials=20000, confirm=True):
    B=rng.standard_normal((trials,nmax)); C=rng.standard_normal((trials,nmax))-delta
    dec=0; pairs=0; correct=0
    for t in range(trials):
        b=B[t]; c=C[t]; prev=0
        for n in range(2,nmax+1):
            bb=b[:n]; cc=c[:n]
            diff=bb.mean()-cc.mean(); thr=2*np.sqrt(bb.var(ddof=1)/n+cc.var(ddof=1)/n)
            sgn = np.sign(diff) if abs(diff)>thr else 0
            okD = n>=minD and abs(diff)>D*thr and (not confirm or prev==sgn)
            if n==nmax or okD or (n>=minF and abs(diff)<F*thr):
                if abs(diff)>thr:
                    dec+=1; correct+= diff>0
                pairs+=n; break
            prev=sgn
    return dec/trials, pairs/trials, correct/trials
for D,F,minD,minF in [(2.5,1.0,3,3),(2.0,1.0,3,3),(3,1.0,3,3)]:
    aa=run(0,D,F,minD,minF,trials=40000)
    r=[run(d,D,F,minD,minF,trials=3000) for d in (3.3,4.5,7,10)]
    print(D,F,minD,minF,"AA %.4f (pairs %.2f)"%(aa[0],aa[1]), " ".join("%gSD det %.3f pairs %.2f"%(d,x[2],x[1]) for d,x in zip((3.3,4.5,7,10),r)))

"""The CUPTI timer's two halves that run without a GPU: the rule that turns one replay's activity
records into a time a call (per_call_ms, pure), and KernelClock's reading of libcupti through
ctypes, driven by a fake libcupti built here that hands back records laid out as CUPTI's are."""
import json
import random
import shutil
import subprocess
import textwrap

import pytest

from conftest import CONTRACT_SRC, ROOT, py_snippet

FAKE_CUPTI_C = textwrap.dedent(r"""
    /* A stand-in for libcupti's activity API: records come from $FAKE_CUPTI_RECORDS
       ("kind:start:end,..."), 32 bytes each, kind at byte 0, start at 16, end at 24, as in
       CUpti_ActivityKernel4-10, CUpti_ActivityMemcpy5-6 and CUpti_ActivityMemset4. */
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    typedef void (*req_t)(uint8_t**, size_t*, size_t*);
    typedef void (*done_t)(void*, uint32_t, uint8_t*, size_t, size_t);
    static req_t req; static done_t done; static int enabled[64];
    int cuptiActivityRegisterCallbacks(req_t r, done_t d) { req = r; done = d; return 0; }
    int cuptiActivityEnable(int kind) {
        const char* f = getenv("FAKE_CUPTI_FAIL_ENABLE");
        if (f && *f) return 17;
        if (kind >= 0 && kind < 64) enabled[kind] = 1;
        return 0;
    }
    int cuptiActivityDisable(int kind) { if (kind >= 0 && kind < 64) enabled[kind] = 0; return 0; }
    int cuptiGetTimestamp(uint64_t* t) {
        const char* now = getenv("FAKE_CUPTI_NOW");
        *t = now ? strtoull(now, NULL, 10) : 0;
        return 0;
    }
    int cuptiGetResultString(int r, const char** s) {
        *s = r == 17 ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "CUPTI_ERROR_UNKNOWN";
        return 0;
    }
    int cuptiActivityFlushAll(uint32_t flag) {
        (void)flag;
        const char* spec = getenv("FAKE_CUPTI_RECORDS");
        uint8_t* buf; size_t size, maxr;
        req(&buf, &size, &maxr);
        size_t used = 0;
        char* copy = strdup(spec ? spec : "");
        for (char* tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            uint32_t kind = 0; unsigned long long s = 0, e = 0;
            kind = (uint32_t)strtoul(tok, &tok, 10); s = strtoull(tok + 1, &tok, 10); e = strtoull(tok + 1, &tok, 10);
            if (kind >= 64 || !enabled[kind] || used + 32 > size) continue;
            memset(buf + used, 0, 32);
            memcpy(buf + used, &kind, 4); memcpy(buf + used + 16, &s, 8); memcpy(buf + used + 24, &e, 8);
            used += 32;
        }
        free(copy);
        done(NULL, 0, buf, size, used);
        return 0;
    }
    int cuptiActivityGetNextRecord(uint8_t* buf, size_t valid, uint8_t** rec) {
        uint8_t* next = *rec ? *rec + 32 : buf;
        if (next + 32 > buf + valid) return 3; /* CUPTI_ERROR_MAX_LIMIT_REACHED's place */
        *rec = next;
        return 0;
    }
""")


@pytest.fixture(scope="module")
def fake_cupti(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed to build the fake libcupti (apt-get install gcc)"
    d = tmp_path_factory.mktemp("cupti")
    (d / "fake_cupti.c").write_text(FAKE_CUPTI_C)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(d / "libcupti.so"), str(d / "fake_cupti.c")], check=True)
    shutil.copy(CONTRACT_SRC, d / "hotkernel_contract.py")
    return d


def clock_reads(py, d, records, fail_enable=False):
    """What KernelClock returns for one start/stop with the fake library handing back `records`."""
    code = textwrap.dedent("""
        import json, os
        os.environ["FAKE_CUPTI_RECORDS"] = %r
        if %r:
            os.environ["FAKE_CUPTI_FAIL_ENABLE"] = "1"
        import hotkernel_contract as hc
        clock = hc.KernelClock(os.path.abspath("libcupti.so"))
        try:
            clock.start()
            got = clock.stop()
            print(json.dumps({"records": got, "again": clock.stop() == []}))
        except hc.ClockError as e:
            print(json.dumps({"error": str(e)}))
    """) % (records, fail_enable)
    return json.loads(py_snippet(py, code, d).strip().splitlines()[-1])


def test_the_clock_reads_kernels_copies_and_memsets_and_nothing_else(py, fake_cupti):
    # kinds: 10 concurrent kernel, 1 memcpy, 2 memset; 5 (CUPTI's RUNTIME API records) is not device work.
    got = clock_reads(py, fake_cupti, "10:300:400,1:100:180,5:0:1000,2:200:250")
    assert got["records"] == [[100, 180], [200, 250], [300, 400]]
    assert got["again"], "records of one start/stop must not carry over to the next"


def test_a_refused_cupti_call_says_which_and_why(py, fake_cupti):
    got = clock_reads(py, fake_cupti, "10:0:10", fail_enable=True)
    assert "cuptiActivityEnable" in got["error"] and "MULTIPLE_SUBSCRIBERS" in got["error"]


def test_a_missing_library_is_a_clock_error_not_a_crash(py, fake_cupti):
    out = py_snippet(py, textwrap.dedent("""
        import hotkernel_contract as hc
        try:
            hc.KernelClock("/nonexistent/libcupti.so.99")
        except hc.ClockError as e:
            print("ClockError:", e)
    """), fake_cupti)
    assert "ClockError:" in out and "could not be loaded" in out


def test_the_mark_is_cuptis_time_on_the_clock_of_its_records(py, fake_cupti):
    out = py_snippet(py, textwrap.dedent("""
        import os
        os.environ["FAKE_CUPTI_NOW"] = "123456789012"
        import hotkernel_contract as hc
        print(hc.KernelClock(os.path.abspath("libcupti.so")).mark())
    """), fake_cupti)
    assert out.strip().splitlines()[-1] == "123456789012"


def test_a_sample_keeps_the_records_after_the_mix_whatever_ran_around_the_prime(py, fake_cupti):
    # The prime (10-20) and two kernels a candidate launched around it (30-60) before the first
    # mark (100), the mix (150-160) before the second (200), the sample's calls after it: the
    # calls' records, all of them (told apart by time, not by how many came before).
    recs = [(10, 20), (30, 40), (50, 60), (150, 160), (210, 300), (310, 400)]
    code = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, %r)
        import hotkernel_harness as hh
        keep = hh.TrustedRun._sample_records
        print(json.dumps([keep(None, %r, (100, 200)), keep(None, %r, (100, 200))]))
    """) % (str(ROOT / "python"), recs, recs[3:])
    kept, unprimed = json.loads(py_snippet(py, code, fake_cupti).strip().splitlines()[-1])
    assert kept == [[210, 300], [310, 400]]
    assert unprimed is None, "no record before the first mark: the prime was never seen"


def per_call(py, d, records, calls):
    code = "import json, hotkernel_contract as hc; print(json.dumps(hc.per_call_ms(%r, %d)))" % (records, calls)
    return json.loads(py_snippet(py, code, d).strip().splitlines()[-1])


def test_one_kernel_a_call_reads_the_kernel_not_the_gap_before_it(py, fake_cupti):
    # Three 2700 ns kernels 400 ns apart: 2.7 us a call (events over the replay would read 3.0 us).
    recs = [(i * 3100, i * 3100 + 2700) for i in range(3)]
    ms, rule = per_call(py, fake_cupti, recs, 3)
    assert rule == "span" and ms == pytest.approx(2700e-6)


def test_gaps_between_a_calls_own_kernels_count(py, fake_cupti):
    # Each call: two kernels of 1000 ns with 500 ns between them (not fused), then 2000 ns to the next call.
    recs = []
    for i in range(4):
        t = i * 4500
        recs += [(t, t + 1000), (t + 1500, t + 2500)]
    ms, rule = per_call(py, fake_cupti, recs, 4)
    assert rule == "span" and ms == pytest.approx(2500e-6)


def test_calls_that_overlap_are_timed_by_the_time_any_work_ran(py, fake_cupti):
    # Two calls whose kernels overlap (side streams not joined per call): the union, a call.
    recs = [(0, 1000), (500, 1500), (1400, 2000), (1900, 3000)]
    ms, rule = per_call(py, fake_cupti, recs, 2)
    assert rule == "busy" and ms == pytest.approx(1500e-6)
    ms, rule = per_call(py, fake_cupti, [(0, 100), (200, 300), (400, 500)], 2)  # 3 records, 2 calls
    assert rule == "busy" and ms == pytest.approx(150e-6)
    assert per_call(py, fake_cupti, [], 5) == [None, None]


def test_the_time_a_call_lies_between_its_busy_time_and_the_replay_period(py, fake_cupti):
    # Any records, any calls: never under the union of their work, never over first start to last end.
    rng = random.Random(7)
    cases = []
    for _ in range(200):
        calls = rng.randint(1, 6)
        m = rng.randint(1, 3)
        t, recs = 0, []
        for _ in range(calls * m + rng.choice([0, 0, 1])):
            t += rng.randint(-300, 800)
            t = max(t, 0)
            d = rng.randint(1, 2000)
            recs.append((t, t + d))
        cases.append((recs, calls))
    code = textwrap.dedent("""
        import json, hotkernel_contract as hc
        cases = json.loads(%r)
        out = []
        for recs, calls in cases:
            recs = [tuple(r) for r in recs]
            ms, rule = hc.per_call_ms(recs, calls)
            union = 0; cs = ce = None
            for a, b in sorted(recs):
                if ce is None or a > ce:
                    union += (ce - cs) if ce is not None else 0
                    cs, ce = a, b
                else:
                    ce = max(ce, b)
            union += ce - cs
            period = max(b for _, b in recs) - min(a for a, _ in recs)
            out.append((ms * calls * 1e6, union, period))
        print(json.dumps(out))
    """) % json.dumps(cases)
    for total, union, period in json.loads(py_snippet(py, code, fake_cupti).strip().splitlines()[-1]):
        assert union - 1e-6 <= total <= period + 1e-6

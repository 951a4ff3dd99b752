// When verify may stop before its n pairs: a sequential design around the seed's rule. The
// verdict is always the seed's rule on the pairs actually run; this only decides how many.
// Pure.
//
// Stop early as decisive once |mean_b - mean_c| > decisive_factor x the seed's threshold
// (2.5 x 2·SE = 5 standard errors) after at least min_decisive pairs, and the effect is at least
// min_effect of the baseline's mean (the spread between processes of the same code, where
// calibrate measured it); or as settled-inconclusive once the seed's rule says inconclusive
// (|diff| under futile_factor = 1 x the threshold) after at least min_futile pairs. Simulated over
// normal noise (40,000 A/A trials, bench/stopping_sim.py): an A/A verify says faster/slower in
// 1.5% of trials (the seed's rule at a fixed n = 10: 6.2%), after 3.2 pairs on average; a true
// difference of 4.5 SD (1% at a run-to-run cv of 0.22%) is decided in > 99.9% at a mean of 3.6
// pairs, one of 3.3 SD (1% at cv 0.3%) in 96% at 4.6. The price is power near the noise.
//
// One ABBA cycle (2 pairs) settles a large effect: decisive at 2 pairs once |diff| is over
// fast_factor x the seed's threshold (10 standard errors) and at least fast_min_effect of the
// baseline's mean (3x the spread between processes, where calibrate measured it), or over
// fast_factor_unmeasured x (20 standard errors) where it was not. Simulated as above: A/A
// decisive in 1.7% (spread measured) and 1.8% (not), against 1.5% from 3 pairs only; a
// difference of 20 SD is decided after 2.0 and 2.4 pairs instead of 3.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace hotkernel {

struct stopping_rule {
    std::size_t min_decisive = 3;
    double decisive_factor = 2.5;
    std::size_t min_futile = 3;
    double futile_factor = 1.0;
    double min_effect = 0;  ///< |diff| / mean_b a decisive stop needs (0: none)
    std::size_t fast_pairs = 2;            ///< one ABBA cycle; 0: no decisive stop before min_decisive
    double fast_factor = 5.0;              ///< at fast_pairs, with a measured spread
    double fast_factor_unmeasured = 10.0;  ///< at fast_pairs, where no spread was measured
    double fast_min_effect = 0;            ///< |diff| / mean_b a stop at fast_pairs needs (0: not measured)
};

enum class stop_kind { go_on, decisive, settled_inconclusive };

struct stop_decision {
    stop_kind kind = stop_kind::go_on;
    std::string why;  ///< one sentence for the result, empty for go_on
};

/// b and c: the timed ms of each side so far (equal counts: whole pairs).
stop_decision should_stop(const std::vector<double>& b, const std::vector<double>& c, const stopping_rule& rule = {});

}  // namespace hotkernel

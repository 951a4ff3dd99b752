// When verify may stop before its n pairs: a sequential design around the seed's rule. The
// verdict is always the seed's rule on the pairs actually run; this only decides how many.
// Pure.
//
// Stop early as decisive once |mean_b - mean_c| > decisive_factor x the seed's threshold
// (2 x 2·SE = 4 standard errors) after at least min_decisive pairs, or as settled-inconclusive
// once it is under futile_factor x the threshold (1 SE) after at least min_futile pairs.
// Simulated over normal noise (docs/measurement.md): an A/A verify says faster/slower in 5.9%
// of trials against 6.2% for a fixed n = 10 (the seed's rule alone at n -> inf: 4.6%); a true
// difference of 6.7 SD (2% at cv 0.3%) is decided at n = 3 in > 99%, one of 3.3 SD (1%) at a
// mean of 3.9 pairs; the price is power for small effects (1.5 SD: 81% against 90% at n = 10).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace hotkernel {

struct stopping_rule {
    std::size_t min_decisive = 3;
    double decisive_factor = 2.0;
    std::size_t min_futile = 4;
    double futile_factor = 0.5;
};

enum class stop_kind { go_on, decisive, settled_inconclusive };

struct stop_decision {
    stop_kind kind = stop_kind::go_on;
    std::string why;  ///< one sentence for the result, empty for go_on
};

/// b and c: the timed ms of each side so far (equal counts: whole pairs).
stop_decision should_stop(const std::vector<double>& b, const std::vector<double>& c, const stopping_rule& rule = {});

}  // namespace hotkernel

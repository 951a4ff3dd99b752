// What two result lines must agree on before their times can be compared, and the fields a
// record cites (seed, target, roofline inputs, versions). Pure.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report/findings.h"
#include "util/json.h"

namespace hotkernel {

/// The fields the verdict rule requires to match: shapes/dtype/iters/seed (the seed's list)
/// plus timer and protocol (different timers measure different things) and, for protocol-3
/// lines, contract_sha256 (two different contracts time and check differently).
const std::vector<std::string>& compared_fields();

/// The protocol number a line declares; 0 for a plain bench-contract line.
int line_protocol(const json& line);

/// Disagreements between a baseline line and a candidate line, one readable string each
/// ("seed: baseline 0, candidate 1"). A field present on one side only counts as a
/// disagreement for protocol-3 lines (where it is mandatory); for plain lines it is skipped.
std::vector<std::string> compare_lines(const json& baseline, const json& candidate);

/// Fields that change between runs of the same script ("run 3 says seed 2, run 1 said 1").
std::vector<std::string> unstable_fields(const std::vector<json>& lines, const std::string& role);

/// A warning when a protocol-3 line's contract_sha256 is not the binary's own contract (a stale
/// or edited vendored copy); none when it matches or the line does not say.
std::optional<finding> contract_mismatch(const json& line, const std::string& binary_hash);

/// The line's value for a field, falling back to an alias ("shape" for "shapes").
json line_field(const json& line, const std::string& field);

}  // namespace hotkernel

// The `gpus` argument, the outer mask and the core slices (pure).
#include "scale/gpu_set.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "util/errors.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel::scale {
namespace {

std::optional<std::size_t> as_number(std::string_view s) {
    std::size_t v = 0;
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (ec != std::errc() || p != end || s.empty()) return std::nullopt;
    return v;
}

bool is_uuid_like(std::string_view s) { return starts_with_ci(s, "GPU-") || starts_with_ci(s, "MIG-"); }

std::string describe(const gpu_record& g) {
    return fmt::format("{} {} ({})", g.index ? std::to_string(*g.index) : "?", g.uuid.value_or("no uuid"), g.name);
}

std::string listing(const std::vector<gpu_record>& gpus) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < gpus.size(); ++i) parts.push_back(fmt::format("{}: {}", i, describe(gpus[i])));
    return parts.empty() ? "none" : join(parts, "; ");
}

/// The card an entry names: an nvidia-smi index, or a UUID (or a prefix of one, as CUDA takes).
const gpu_record* find_card(const std::vector<gpu_record>& all, std::string_view entry) {
    if (auto n = as_number(entry)) {
        for (const auto& g : all)
            if (g.index && *g.index >= 0 && static_cast<std::size_t>(*g.index) == *n) return &g;
        return nullptr;
    }
    const gpu_record* hit = nullptr;
    for (const auto& g : all)
        if (g.uuid && entry.size() >= 5 && starts_with_ci(*g.uuid, entry)) {
            if (hit != nullptr) return nullptr;  // an ambiguous prefix names no card
            hit = &g;
        }
    return hit;
}

}  // namespace

gpus_request parse_gpus(std::string_view text) {
    const std::string t = trim(text);
    gpus_request r;
    if (t.empty() || to_lower(t) == "all") return r;
    const auto fix = fmt::format("give {}, a count such as {}, or indices and UUIDs such as {}",
                                 words::param("gpus", "all"), words::param("gpus", "2"), words::param("gpus", "0,2"));
    if (t.find(',') == std::string::npos) {
        if (auto n = as_number(t)) {
            if (*n == 0) throw usage_error(fmt::format("{}: 0 GPUs spread nothing; {}", words::param("gpus"), fix));
            r.what = gpus_request::kind::count;
            r.count = *n;
            return r;
        }
        if (!is_uuid_like(t))
            throw usage_error(fmt::format("{}: '{}' is neither a count nor a GPU UUID; {}", words::param("gpus"),
                                          shorten(t, 80), fix));
    }
    r.what = gpus_request::kind::list;
    for (const auto& part : split(t, ',')) {
        const std::string item = trim(part);
        if (item.empty()) continue;
        if (!as_number(item) && !is_uuid_like(item))
            throw usage_error(fmt::format("{}: '{}' is neither an index nor a GPU UUID; {}", words::param("gpus"),
                                          shorten(item, 80), fix));
        if (starts_with_ci(item, "MIG-"))
            throw usage_error(fmt::format("{}: '{}' is a MIG instance; a pool leases whole cards: give GPU UUIDs or "
                                          "indices",
                                          words::param("gpus"), shorten(item, 80)));
        if (std::find(r.items.begin(), r.items.end(), item) == r.items.end()) r.items.push_back(item);
    }
    if (r.items.empty()) throw usage_error(fmt::format("{}: '{}' lists no GPU; {}", words::param("gpus"), t, fix));
    return r;
}

std::vector<gpu_record> visible_gpus(const std::vector<gpu_record>& all, const std::optional<std::string>& cvd,
                                     std::string* why) {
    if (!cvd) return all;
    std::vector<gpu_record> out;
    for (const auto& part : split(*cvd, ',')) {
        const std::string entry = trim(part);
        if (starts_with_ci(entry, "MIG-")) {
            if (why) *why = fmt::format("CUDA_VISIBLE_DEVICES names the MIG instance {}; a pool leases whole cards", entry);
            break;
        }
        const gpu_record* g = entry.empty() ? nullptr : find_card(all, entry);
        if (g == nullptr) {  // CUDA stops at the first entry it cannot use
            if (why && !entry.empty())
                *why = fmt::format("CUDA_VISIBLE_DEVICES entry '{}' names no GPU nvidia-smi lists", shorten(entry, 80));
            break;
        }
        if (std::none_of(out.begin(), out.end(), [&](const gpu_record& o) { return o.uuid == g->uuid && o.index == g->index; }))
            out.push_back(*g);
    }
    return out;
}

std::vector<gpu_record> choose_gpus(const std::vector<gpu_record>& visible, const gpus_request& req) {
    switch (req.what) {
        case gpus_request::kind::all: return visible;
        case gpus_request::kind::count:
            if (req.count > visible.size())
                throw tool_error(fmt::format("{}: {} GPUs asked for but {} visible ({}); ask for at most {} or "
                                             "widen CUDA_VISIBLE_DEVICES",
                                             words::param("gpus"), req.count, visible.size(), listing(visible),
                                             visible.size()));
            return {visible.begin(), visible.begin() + static_cast<std::ptrdiff_t>(req.count)};
        case gpus_request::kind::list: break;
    }
    std::vector<gpu_record> out;
    for (const auto& item : req.items) {
        const gpu_record* g = nullptr;
        if (auto n = as_number(item)) {
            if (*n < visible.size()) g = &visible[*n];
        } else {
            g = find_card(visible, item);
        }
        if (g == nullptr)
            throw tool_error(fmt::format("{}: '{}' names none of the visible GPUs (indices count them inside "
                                         "CUDA_VISIBLE_DEVICES: {}); pick from that list",
                                         words::param("gpus"), shorten(item, 80), listing(visible)));
        if (std::none_of(out.begin(), out.end(), [&](const gpu_record& o) { return o.uuid == g->uuid; }))
            out.push_back(*g);
    }
    return out;
}

std::vector<int> core_slice(const std::vector<int>& allowed, std::size_t slot, std::size_t slots) {
    if (allowed.empty() || slots == 0) return {};
    const std::size_t n = allowed.size();
    if (n < slots) return {allowed[slot % n]};
    const std::size_t begin = slot * n / slots, end = (slot + 1) * n / slots;
    return {allowed.begin() + static_cast<std::ptrdiff_t>(begin), allowed.begin() + static_cast<std::ptrdiff_t>(end)};
}

std::string cpu_list_text(const std::vector<int>& cpus_in) {
    std::vector<int> cpus = cpus_in;
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        parts.push_back(j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]));
        i = j + 1;
    }
    return join(parts, ",");
}

}  // namespace hotkernel::scale

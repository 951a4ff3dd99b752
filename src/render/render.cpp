#include "render/render.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "report/findings.h"

namespace hotkernel {
namespace {

std::string scalar(const json& v) {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_number()) return format_number(v.get<double>());
    if (v.is_array()) {
        std::string out;
        for (const auto& e : v) {
            if (!out.empty()) out += ", ";
            out += e.is_primitive() ? scalar(e) : dump_line(e);
        }
        return out.empty() ? "(none)" : out;
    }
    return dump_line(v);
}

bool is_table(const json& v) {
    if (!v.is_array() || v.empty()) return false;
    return std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_object(); });
}

std::string label(const std::string& key) {
    std::string s = key;
    std::replace(s.begin(), s.end(), '_', ' ');
    return s;
}

void render_table(std::ostringstream& out, const json& rows, const std::string& indent, std::size_t max_rows) {
    std::vector<std::string> cols;
    for (const auto& r : rows)
        for (auto it = r.begin(); it != r.end(); ++it)
            if (it.value().is_primitive() && std::find(cols.begin(), cols.end(), it.key()) == cols.end()) cols.push_back(it.key());
    std::vector<std::vector<std::string>> cells;
    const std::size_t n = std::min(rows.size(), max_rows);
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::string> row;
        for (const auto& c : cols) {
            std::string s = rows[i].contains(c) ? scalar(rows[i][c]) : "";
            if (s.size() > 60) s = s.substr(0, 57) + "...";
            row.push_back(s);
        }
        cells.push_back(row);
    }
    std::vector<std::size_t> width(cols.size());
    for (std::size_t c = 0; c < cols.size(); ++c) {
        width[c] = cols[c].size();
        for (auto& r : cells) width[c] = std::max(width[c], r[c].size());
    }
    out << indent;
    for (std::size_t c = 0; c < cols.size(); ++c) out << fmt::format("{:<{}}  ", cols[c], width[c]);
    out << "\n";
    for (auto& r : cells) {
        out << indent;
        for (std::size_t c = 0; c < cols.size(); ++c) out << fmt::format("{:<{}}  ", r[c], width[c]);
        out << "\n";
    }
    if (rows.size() > n) out << indent << fmt::format("… {} more rows (use --json for all)\n", rows.size() - n);
}

void render_object(std::ostringstream& out, const json& obj, const std::string& indent, std::size_t max_rows) {
    std::size_t w = 0;
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (it.value().is_primitive() || (it.value().is_array() && !is_table(it.value()))) w = std::max(w, it.key().size());
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const json& v = it.value();
        if (v.is_object()) {
            out << indent << label(it.key()) << ":\n";
            render_object(out, v, indent + "  ", max_rows);
        } else if (is_table(v)) {
            out << indent << label(it.key()) << ":\n";
            render_table(out, v, indent + "  ", max_rows);
        } else {
            std::string s = scalar(v);
            if (s.find('\n') != std::string::npos) {
                out << indent << label(it.key()) << ":\n";
                std::istringstream lines(s);
                std::string line;
                while (std::getline(lines, line)) out << indent << "  " << line << "\n";
            } else {
                out << indent << fmt::format("{:<{}}  {}", label(it.key()), w, s) << "\n";
            }
        }
    }
}

/// `warnings` and `flags` ({id, message} items) read as their messages, as a list of strings does.
json messages_of_findings(const json& result) {
    json shown = result;
    for (const char* key : {"warnings", "flags"}) {
        if (!shown.contains(key) || !shown[key].is_array()) continue;
        json messages = json::array();
        for (const auto& f : shown[key]) messages.push_back(finding_message(f));
        shown[key] = messages;
    }
    return shown;
}

}  // namespace

std::string format_number(double v) {
    if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    if (v == 0) return "0";
    double a = std::fabs(v);
    std::string s = (a >= 1e7 || a < 1e-4) ? fmt::format("{:.4g}", v) : fmt::format("{:.{}f}", v, std::max(0, 3 - static_cast<int>(std::floor(std::log10(a)))));
    if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s;
}

namespace {
std::string cut(std::string s, std::size_t n) {
    if (s.size() > n) s = s.substr(0, n - 3) + "...";
    return s;
}

std::string inline_value(const json& v, std::size_t n) {
    if (v.is_object()) {
        std::string out;
        for (auto it = v.begin(); it != v.end(); ++it)
            if (it.value().is_primitive()) out += (out.empty() ? "" : ", ") + it.key() + " " + scalar(it.value());
        return cut(out.empty() ? "{...}" : out, n);
    }
    if (is_table(v)) return fmt::format("{} item(s)", v.size());
    return cut(scalar(v), n);
}
}  // namespace

std::string render_summary(const json& result, std::size_t max_chars) {
    if (!result.is_object()) return cut(scalar(result), max_chars) + "\n";
    std::string out;
    for (auto it = result.begin(); it != result.end(); ++it) {
        if (it.key() == "schema_version" || it.key() == "hotkernel_version") continue;  // for files, not for reading
        std::string line;
        if ((it.key() == "warnings" || it.key() == "flags") && it.value().is_array()) {
            if (it.value().empty()) continue;
            std::vector<std::string> ids;
            for (const auto& f : it.value()) ids.push_back(finding_id_of(f));
            line = it.key() + ": " + cut(fmt::format("{}", fmt::join(ids, ", ")), 200) + " (messages in structuredContent)";
        } else {
            line = it.key() + ": " + inline_value(it.value(), 160);
        }
        if (out.size() + line.size() + 1 > max_chars) {
            out += "... (the rest in structuredContent)\n";
            break;
        }
        out += line + "\n";
    }
    return out;
}

std::string render_text(const json& result, std::size_t max_rows) {
    std::ostringstream out;
    if (result.is_object()) render_object(out, messages_of_findings(result), "", max_rows);
    else out << scalar(result) << "\n";
    return out.str();
}

}  // namespace hotkernel

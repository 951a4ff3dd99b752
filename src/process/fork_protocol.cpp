// The fork server's wire codec (see fork_protocol.h for the schema).
#include "process/fork_protocol.h"

#include <vector>

namespace hotkernel {

json encode_fork_request(std::size_t id, const process_spec& spec, const std::string& cwd,
                         const std::map<std::string, std::string>* env_full) {
    json req{{"id", id},
             {"script", spec.argv.at(1)},
             {"argv", std::vector<std::string>(spec.argv.begin() + 1, spec.argv.end())},
             {"env_set", spec.env_set},
             {"env_unset", spec.env_unset},
             {"cwd", cwd},
             {"stdin_b64", base64_encode(spec.stdin_data)},
             {"result_channel", spec.result_channel},
             {"result_fd_env", spec.result_fd_env},
             {"timeout_s", spec.timeout_s},
             {"kill_grace_s", spec.kill_grace_s},
             {"max_capture_bytes", spec.max_capture_bytes},
             {"closes_before_exit", spec.closes_before_exit}};
    if (env_full != nullptr) req["env_full"] = *env_full;
    return req;
}

process_result decode_fork_done(const json& ans, double elapsed_s) {
    process_result res;
    if (const auto pid = ans.find("pid"); pid != ans.end() && pid->is_number_integer()) res.pid = pid->get<long>();
    res.timed_out = ans.value("timed_out", false);
    res.exit_pending = ans.value("exiting", false);
    const json& code = ans.contains("exit_code") ? ans["exit_code"] : json();
    res.exit_code = res.exit_pending ? 0 : (code.is_number_integer() ? code.get<int>() : -1);
    res.cancelled = ans.value("cancelled", false);
    res.term_signal = res.timed_out || res.cancelled ? 0 : ans.value("signal", 0);
    res.wall_s = ans.value("wall_s", elapsed_s);
    res.stdout_text = base64_decode(ans.value("stdout_b64", ""));
    res.stderr_text = base64_decode(ans.value("stderr_b64", ""));
    res.channel_text = base64_decode(ans.value("channel_b64", ""));
    res.stdout_truncated = ans.value("stdout_truncated", false);
    res.stderr_truncated = ans.value("stderr_truncated", false);
    if (ans.contains("server_changed") && ans["server_changed"].is_string()) res.server_changed = ans["server_changed"];
    if (ans.contains("strays") && ans["strays"].is_array())
        for (const auto& st : ans["strays"])
            if (st.is_string()) res.strays.push_back(st.get<std::string>());
    return res;
}

json encode_fork_cancel(std::size_t id) { return json{{"op", "cancel"}, {"id", id}}; }

fork_answer decode_fork_answer(std::string_view text) {
    fork_answer a;
    json j = json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) return a;
    const std::string ev = j["event"];
    if (ev == "ready") a.what = fork_answer::kind::ready;
    else if (ev == "done") a.what = fork_answer::kind::done;
    else if (ev == "refused") a.what = fork_answer::kind::refused;
    else if (ev == "pong") a.what = fork_answer::kind::pong;
    else a.what = fork_answer::kind::other;
    if (j.contains("id") && j["id"].is_number_unsigned()) a.id = j["id"].get<std::size_t>();
    a.forkable = j.value("forkable", false) == true;
    if (j.contains("reason") && j["reason"].is_string()) a.reason = j["reason"];
    a.line = std::move(j);
    return a;
}

namespace {
constexpr char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view in) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                           static_cast<unsigned char>(in[i + 2]);
        for (int k = 18; k >= 0; k -= 6) out += b64_chars[(v >> k) & 63];
    }
    if (i < in.size()) {
        unsigned v = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
        out += b64_chars[(v >> 18) & 63];
        out += b64_chars[(v >> 12) & 63];
        out += i + 1 < in.size() ? b64_chars[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string base64_decode(std::string_view in) {
    std::string out;
    out.reserve(in.size() / 4 * 3);
    unsigned acc = 0;
    int bits = 0;
    for (char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+') v = 62;
        else if (c == '/') v = 63;
        else continue;  // padding, whitespace
        acc = (acc << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return out;
}

}  // namespace hotkernel

// `hotkernel mcp`: the stdio transport around mcp_session. Guards stdout (a private dup of
// fd 1 carries MCP; fd 1 itself goes to stderr), splits lines, exits on EOF or SIGTERM.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <fmt/format.h>

#include "mcp/server.h"
#include "process/posix_io.h"

namespace hotkernel {
namespace {

constexpr auto shutdown_wait = std::chrono::seconds(5);  // > the runner's 2 s SIGTERM→SIGKILL grace

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

/// Feeds complete lines to the session; drops (and reports, with the id its start holds) a
/// line longer than the cap.
class line_splitter {
public:
    explicit line_splitter(mcp_session& session) : m_session(session) {}

    void feed(const char* data, std::size_t n) {
        for (std::size_t i = 0; i < n;) {
            const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', n - i));
            const std::size_t end = nl ? static_cast<std::size_t>(nl - data) : n;
            if (!m_overflow) {
                m_buf.append(data + i, end - i);
                if (m_buf.size() > mcp_max_line_bytes) {
                    m_overflow = true;
                    m_buf.resize(mcp_kept_line_start);  // enough to find the id in
                    m_buf.shrink_to_fit();
                }
            }
            if (nl == nullptr) break;
            finish_line();
            i = end + 1;
        }
    }
    void finish() {  // EOF: a last message without its newline still counts
        if (!m_buf.empty() || m_overflow) finish_line();
    }

private:
    void finish_line() {
        if (m_overflow) {
            m_session.handle_oversized_line(m_buf, mcp_max_line_bytes);
            m_overflow = false;
        } else {
            m_session.handle_line(m_buf);
        }
        m_buf.clear();
    }
    mcp_session& m_session;
    std::string m_buf;
    bool m_overflow = false;
};

}  // namespace

int run_mcp_server(std::istream& in, std::ostream& out, const mcp_options& opts) {
    const bool real_stdio = &in == &std::cin && &out == &std::cout;
    int proto_fd = -1;
    if (real_stdio) {
        // Keep fd 1 for MCP only: dup it privately, then point fd 1 at stderr so any stray
        // printf/std::cout (a library, a bug) lands in the log instead of the protocol.
        std::cout.flush();
        std::fflush(stdout);
        proto_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (proto_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            std::cerr << "hotkernel mcp: cannot set up stdout (" << std::strerror(errno) << ")\n";
            return 1;
        }
    }
    std::signal(SIGPIPE, SIG_IGN);  // a closed client pipe is an EPIPE, handled below
    std::atomic<bool> output_broken{false};
    mcp_session::writer_fn writer;
    if (real_stdio) {
        writer = [proto_fd, &output_broken](const json& msg) {
            if (output_broken) return;
            if (!write_all(proto_fd, dump_line(msg) + "\n")) output_broken = true;
        };
    } else {
        writer = [&out](const json& msg) { out << dump_line(msg) << '\n' << std::flush; };
    }

    mcp_session_options sopts;
    sopts.python = opts.python;

    if (!real_stdio) {
        mcp_session session(std::move(sopts), writer);
        line_splitter lines(session);
        std::string line;
        while (std::getline(in, line)) {
            line += '\n';
            lines.feed(line.data(), line.size());
        }
        session.shutdown(shutdown_wait);
        return 0;
    }

    // SIGTERM/SIGINT/SIGHUP are blocked in every thread (workers inherit this mask; children
    // get an empty mask from the runner) and delivered only inside ppoll() below, so they end
    // the loop cleanly: running calls are cancelled and their process groups killed.
    sigset_t stop_sigs, old_mask;
    sigemptyset(&stop_sigs);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_sigs, s);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, &old_mask);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaction(s, &sa, nullptr);
    sigset_t wait_mask = old_mask;
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigdelset(&wait_mask, s);

    bool finished_in_time = true;
    {
        mcp_session session(std::move(sopts), writer);
        line_splitter lines(session);
        std::vector<char> chunk(1 << 16);
        for (;;) {
            if (g_stop_signal != 0 || output_broken) break;
            pollfd p{STDIN_FILENO, POLLIN, 0};
            timespec tick{0, 250'000'000};  // wake to notice a broken output pipe
            const int r = ::ppoll(&p, 1, &tick, &wait_mask);
            if (r < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (r == 0) continue;
            const ssize_t n = ::read(STDIN_FILENO, chunk.data(), chunk.size());
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN) continue;
                break;
            }
            if (n == 0) {
                lines.finish();
                break;
            }
            lines.feed(chunk.data(), static_cast<std::size_t>(n));
        }
        if (g_stop_signal != 0) std::cerr << "hotkernel mcp: stopping on signal " << g_stop_signal << "\n";
        finished_in_time = session.shutdown(shutdown_wait);
        if (!finished_in_time) {
            // A handler ignored its cancel token; don't hang the client's shutdown on it.
            std::cerr << "hotkernel mcp: a tool call did not stop in time; exiting anyway\n" << std::flush;
            std::_Exit(0);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ::close(proto_fd);
    return 0;
}

}  // namespace hotkernel

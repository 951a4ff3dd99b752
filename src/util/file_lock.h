// An exclusive flock held for the lifetime of the object: record's results/.lock and the
// per-GPU measurement lock. It polls rather than blocking, so a stuck holder gives an error
// that says what to do instead of a hang, and a waiting MCP call can still be cancelled.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

namespace hotkernel {

class file_lock {
public:
    struct options {
        double timeout_s = 120;                 ///< then tool_error naming `holder_what`
        std::string holder_what = "another hotkernel process";  ///< for the timeout message
        std::function<bool()> cancelled;         ///< polled while waiting; true: tool_error
        unsigned mode = 0644;                    ///< for a lock file this call creates
        bool optional = false;                   ///< a lock file that cannot be opened: go on unlocked
    };
    file_lock(const std::filesystem::path& path, const options& opt);
    explicit file_lock(const std::filesystem::path& path) : file_lock(path, options{}) {}
    ~file_lock();
    file_lock(const file_lock&) = delete;
    file_lock& operator=(const file_lock&) = delete;

    /// Seconds spent waiting for another holder (0 when the lock was free).
    [[nodiscard]] double waited_s() const { return m_waited_s; }
    /// With options::optional: why there is no lock ("" when it is held).
    [[nodiscard]] const std::string& not_held() const { return m_not_held; }

private:
    int m_fd = -1;
    double m_waited_s = 0;
    std::string m_not_held;
};

}  // namespace hotkernel

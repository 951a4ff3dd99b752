#include "vcs/git_checkout.h"

#include <system_error>

#include <fmt/format.h>

#include "util/errors.h"
#include "util/files.h"
#include "util/strings.h"
#include "util/words.h"

namespace hotkernel {
namespace fs = std::filesystem;

namespace {

constexpr double k_git_timeout_s = 60;
constexpr std::size_t k_max_files = 256;
constexpr std::size_t k_max_file_bytes = 64u << 20;

struct git_output {
    bool ok = false;
    std::string out;
    std::string why;
};

git_output git(process_runner& runner, const cancel_token& cancel, const fs::path& dir,
               std::vector<std::string> args, std::size_t max_bytes = 8u << 20) {
    process_spec spec;
    spec.argv = {"git", "-C", dir.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = k_git_timeout_s;
    spec.max_capture_bytes = max_bytes + 1;
    spec.env_set = {{"GIT_TERMINAL_PROMPT", "0"}, {"LC_ALL", "C"}};
    const process_result r = runner.run(spec, cancel);
    git_output g;
    if (r.cancelled) throw tool_error("cancelled while reading the baseline from git");
    if (r.spawn_failed)
        throw tool_error(fmt::format("{} needs git, which could not be started ({}); install git",
                                     words::param("baseline_ref"), shorten(r.spawn_error, 120)));
    if (r.stdout_truncated || r.stdout_text.size() > max_bytes)
        throw tool_error(fmt::format("`git {}` printed more than {} MiB", shorten(join(args, " "), 80), max_bytes >> 20));
    g.ok = r.ok();
    g.out = r.stdout_text;
    g.why = r.ok() ? "" : fmt::format("{}: {}", r.describe(k_git_timeout_s), shorten(trim(r.stderr_text), 200));
    return g;
}

}  // namespace

ref_checkout::ref_checkout(ref_checkout&& o) noexcept
    : script(std::move(o.script)), ref(std::move(o.ref)), commit(std::move(o.commit)), rel_path(std::move(o.rel_path)),
      files(o.files), m_dir(std::move(o.m_dir)) {
    o.m_dir.clear();
}

ref_checkout& ref_checkout::operator=(ref_checkout&& o) noexcept {
    if (this != &o) {
        std::error_code ec;
        if (!m_dir.empty()) fs::remove_all(m_dir, ec);
        script = std::move(o.script);
        ref = std::move(o.ref);
        commit = std::move(o.commit);
        rel_path = std::move(o.rel_path);
        files = o.files;
        m_dir = std::move(o.m_dir);
        o.m_dir.clear();
    }
    return *this;
}

ref_checkout::~ref_checkout() {
    std::error_code ec;
    if (!m_dir.empty()) fs::remove_all(m_dir, ec);
}

ref_checkout checkout_script_at(const std::string& ref, const fs::path& script, process_runner& runner,
                                const cancel_token& cancel) {
    const std::string r = trim(ref);
    if (r.empty() || r[0] == '-' || r.find_first_of("\n\r\0", 0, 3) != std::string::npos)
        throw usage_error(fmt::format("{} '{}' is not a git ref; give a branch, tag or commit, e.g. main",
                                      words::param("baseline_ref"), shorten(ref, 80)));
    std::error_code ec;
    const fs::path abs = fs::absolute(script, ec).lexically_normal();
    const fs::path dir = abs.parent_path();
    if (!fs::is_directory(dir, ec))
        throw tool_error(fmt::format("the baseline's folder '{}' does not exist; pass the script's path in the working "
                                     "copy (it may be deleted there, not its folder)",
                                     shorten(dir.string(), 160)));
    const git_output top = git(runner, cancel, dir, {"rev-parse", "--show-toplevel"});
    if (!top.ok)
        throw tool_error(fmt::format("{}: '{}' is not inside a git repository ({}); run verify in the "
                                     "repository, or pass both scripts without {}",
                                     words::param("baseline_ref"), shorten(dir.string(), 160), top.why,
                                     words::param("baseline_ref")));
    const fs::path root = fs::weakly_canonical(trim(top.out), ec);
    const git_output sha = git(runner, cancel, root, {"rev-parse", "--verify", "--quiet", "--end-of-options", r + "^{commit}"});
    if (!sha.ok || trim(sha.out).empty())
        throw tool_error(fmt::format("{} '{}' names no commit in {}; give a branch, tag or commit that `git "
                                     "rev-parse` knows (git fetch it first in a shallow CI clone)",
                                     words::param("baseline_ref"), shorten(r, 80), shorten(root.string(), 160)));
    ref_checkout out;
    out.ref = r;
    out.commit = trim(sha.out);
    const fs::path rel = fs::weakly_canonical(abs, ec).lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..")
        throw tool_error(fmt::format("the baseline '{}' is outside the repository {}", shorten(abs.string(), 160),
                                     shorten(root.string(), 160)));
    out.rel_path = rel.generic_string();
    const std::string rel_dir = rel.parent_path().generic_string();
    // The folder's entries at that commit (blobs only: subfolders and submodules are not copied).
    const git_output tree =
        git(runner, cancel, root, {"ls-tree", "-z", "--full-tree", out.commit, rel_dir.empty() ? "." : rel_dir + "/"});
    if (!tree.ok) throw tool_error(fmt::format("{}: `git ls-tree` failed ({})", words::param("baseline_ref"), tree.why));
    std::vector<std::pair<std::string, std::string>> blobs;  // (object id, path)
    bool has_script = false;
    for (const auto& entry : split(tree.out, '\0')) {
        // "<mode> <type> <object>\t<path>"
        const auto tab = entry.find('\t');
        if (tab == std::string::npos) continue;
        const auto meta = split(entry.substr(0, tab), ' ');
        if (meta.size() != 3 || meta[1] != "blob") continue;
        const std::string path = entry.substr(tab + 1);
        has_script |= path == out.rel_path;
        blobs.emplace_back(meta[2], path);
    }
    if (!has_script)
        throw tool_error(fmt::format("'{}' is not in {} ({}); give the path the baseline has in that commit",
                                     shorten(out.rel_path, 160), shorten(r, 80), out.commit.substr(0, 12)));
    if (blobs.size() > k_max_files)
        throw tool_error(fmt::format("the baseline's folder has {} files at {} (more than {}); keep the target in a "
                                     "folder of its own",
                                     blobs.size(), shorten(r, 80), k_max_files));
    out.m_dir = make_temp_dir("hotkernel-baseline-");
    for (const auto& [object, path] : blobs) {
        const git_output blob = git(runner, cancel, root, {"cat-file", "blob", object}, k_max_file_bytes);
        if (!blob.ok) throw tool_error(fmt::format("{}: could not read {} at {} ({})", words::param("baseline_ref"), shorten(path, 160), r, blob.why));
        write_file_atomic(out.m_dir / fs::path(path).filename(), blob.out);
        ++out.files;
    }
    out.script = out.m_dir / rel.filename();
    return out;
}

}  // namespace hotkernel

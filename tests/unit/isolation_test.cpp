// Nothing one run does reaches a later one: the scripts' hashes between runs, hotkernel's own
// Python folder checked against the binary, and which processes the stray sweep ends.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "measure/trusted_launcher.h"
#include "process/strays.h"
#include "python/interpreter.h"
#include "util/files.h"

using namespace hotkernel;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

/// Points cache_dir() at a folder of its own for one test.
class own_cache {
public:
    explicit own_cache(const fs::path& dir) {
        if (const char* v = std::getenv("XDG_CACHE_HOME")) m_old = v;
        ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    }
    ~own_cache() {
        if (m_old) ::setenv("XDG_CACHE_HOME", m_old->c_str(), 1);
        else ::unsetenv("XDG_CACHE_HOME");
    }

private:
    std::optional<std::string> m_old;
};
}  // namespace

TEST(ScriptWatch, UnchangedScriptsPass) {
    const fs::path d = temp_dir("hk-watch-same");
    write(d / "a.py", "x = 1\n");
    write(d / "b.py", "y = 2\n");
    script_watch w({d / "a.py", d / "b.py"});
    EXPECT_EQ(w.check(), "");
    EXPECT_EQ(w.check(), "");
    fs::remove_all(d);
}

TEST(ScriptWatch, ASameSizeEditBetweenRunsIsNamed) {
    const fs::path d = temp_dir("hk-watch-edit");
    write(d / "gelu_baseline.py", "x = 1\n");
    write(d / "gelu_candidate.py", "y = 2\n");
    script_watch w({d / "gelu_baseline.py", d / "gelu_candidate.py"});
    EXPECT_EQ(w.check(), "");
    write(d / "gelu_baseline.py", "x = 9\n");  // same size, other bytes
    const std::string why = w.check();
    EXPECT_NE(why.find((d / "gelu_baseline.py").string() + " changed"), std::string::npos) << why;
    EXPECT_EQ(why.find("gelu_candidate.py"), std::string::npos) << why;
    // Still changed at the next check: every later run is void too.
    EXPECT_NE(w.check(), "");
    fs::remove_all(d);
}

TEST(ScriptWatch, AScriptRemovedBetweenRunsIsNamed) {
    const fs::path d = temp_dir("hk-watch-gone");
    write(d / "a.py", "x = 1\n");
    script_watch w({d / "a.py"});
    EXPECT_EQ(w.check(), "");
    fs::remove(d / "a.py");
    EXPECT_NE(w.check().find("can no longer be read"), std::string::npos);
    fs::remove_all(d);
}

TEST(PythonDir, AFreshFolderHoldsOnlyTheBinarysFilesAndSaysNothing) {
    const fs::path d = temp_dir("hk-pydir-fresh");
    own_cache cache(d);
    take_python_dir_findings();
    const fs::path dir = embedded_python_dir();
    EXPECT_EQ(dir.parent_path(), d / "hotkernel");
    for (const auto& name : embedded_python_names()) EXPECT_EQ(read_file(dir / name), embedded_python(name)) << name;
    embedded_python_dir();  // a second call finds nothing either
    EXPECT_TRUE(take_python_dir_findings().empty());
    fs::remove_all(d);
}

TEST(PythonDir, PlantedBytecodePthExtraFilesAndSameSizeEditsAreRemovedAndSaid) {
    const fs::path d = temp_dir("hk-pydir-planted");
    own_cache cache(d);
    const fs::path dir = embedded_python_dir();
    take_python_dir_findings();
    // What a candidate could leave: bytecode beside the contract, a .pth, a module of its own,
    // and the contract edited in place with its size kept.
    write(dir / "__pycache__" / "hotkernel_contract.cpython-311.pyc", "planted");
    write(dir / "evil.pth", "import os\n");
    write(dir / "torch.py", "raise SystemExit\n");
    std::string edited(embedded_python("hotkernel_contract.py"));
    edited[edited.size() - 2] = edited[edited.size() - 2] == 'x' ? 'y' : 'x';
    write(dir / "hotkernel_contract.py", edited);
    ASSERT_EQ(embedded_python_dir(), dir);
    EXPECT_EQ(read_file(dir / "hotkernel_contract.py"), embedded_python("hotkernel_contract.py"));
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
    std::sort(left.begin(), left.end());
    std::vector<std::string> ours = embedded_python_names();
    std::sort(ours.begin(), ours.end());
    EXPECT_EQ(left, ours);
    const auto found = take_python_dir_findings();
    for (const char* what : {"__pycache__", "evil.pth", "torch.py", "hotkernel_contract.py (other bytes)"})
        EXPECT_NE(std::find(found.begin(), found.end(), what), found.end()) << what;
    EXPECT_TRUE(take_python_dir_findings().empty());  // said once
    fs::remove_all(d);
}

TEST(PythonDir, TheRunnerIsHandedEveryFilesHash) {
    const auto hashes = embedded_python_hashes();
    for (const auto& name : embedded_python_names()) EXPECT_EQ(hashes.at(name).size(), 64u) << name;
    EXPECT_EQ(hashes.at("hotkernel_contract.py"), contract_hash());
}

TEST(Strays, EveryDescendantNotBelowAKnownChildIsSwept) {
    // 100 is hotkernel; 200 a fork server it knows (with a run 201 below it); 300 a stray with a
    // setsid'd grandchild 301 and its child 302; 400 an unrelated process.
    const std::map<int, int> parent_of{{100, 1},   {200, 100}, {201, 200}, {300, 100},
                                       {301, 300}, {302, 301}, {400, 1}};
    const auto swept = stray_tree(100, parent_of, {200});
    EXPECT_EQ(swept, (std::vector<int>{300, 301, 302}));  // parents first, nothing known or foreign
    EXPECT_TRUE(stray_tree(100, {{200, 100}}, {200}).empty());
}

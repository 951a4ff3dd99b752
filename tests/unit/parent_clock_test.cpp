// The parent's clock: the bound on a run's reported times (pure), and the server that times
// each released sample, driven over its real socket.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "measure/parent_clock.h"
#include "process/posix_io.h"

using namespace hotkernel;

namespace {
// A log of `n` timed windows of `window_ms` over `calls` calls, after empty samples of `fixed_ms`.
parent_clock_log log_of(int n, double window_ms, long calls, double fixed_ms = 0.1) {
    parent_clock_log log;
    log.connected = log.ended = log.imported = true;
    for (int i = 0; i < 5; ++i) log.empty.push_back({fixed_ms, 0});
    for (int i = 0; i < n; ++i) log.timed.push_back({window_ms, calls});
    return log;
}

json line_of(int n, double per_call_ms, long calls, const std::string& timer = "cpu") {
    json s = json::array();
    for (int i = 0; i < n; ++i) s.push_back(per_call_ms);
    return json{{"status", "ok"}, {"ok", true}, {"ms", per_call_ms}, {"samples_ms", s},
                {"calls_per_sample", calls}, {"timer", timer}};
}
}  // namespace

TEST(ClockBound, HoldsWhenTheReportedTimesFillTheWindows) {
    // 100 calls of 0.1 ms = 10 ms reported; the parent saw 10.1 ms, 0.1 ms of it the fixed cost.
    auto b = check_clock_bound(log_of(10, 10.1, 100), line_of(10, 0.1, 100));
    EXPECT_TRUE(b.applies);
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.excess_ms, 0.0, 1e-9);
}

TEST(ClockBound, ATenPercentFakeOfATenMillisecondSampleBreaksIt) {
    // The work took 10 ms; the result says 9.
    auto b = check_clock_bound(log_of(10, 10.1, 100), line_of(10, 0.09, 100));
    EXPECT_FALSE(b.held);
    EXPECT_NEAR(b.excess_ms, 1.0, 1e-9);
    EXPECT_NE(b.reason.find("missing from the reported times"), std::string::npos) << b.reason;
    json line = line_of(10, 0.09, 100);
    apply_clock_bound(line, b);
    EXPECT_EQ(line["status"], "invalid");
    EXPECT_EQ(line["ok"], false);
    EXPECT_EQ(line["parent_clock"]["bound"], "broken");
}

TEST(ClockBound, AFewSlowWindowsDoNotBreakItButMostDo) {
    // A preempted sample or two (a busy machine) is not a fake: the median decides.
    auto log = log_of(10, 10.1, 100);
    log.timed[3].ms = 30;
    log.timed[7].ms = 25;
    EXPECT_TRUE(check_clock_bound(log, line_of(10, 0.1, 100)).held);
    for (int i = 0; i < 6; ++i) log.timed[i].ms = 12;
    EXPECT_FALSE(check_clock_bound(log, line_of(10, 0.1, 100)).held);
}

TEST(ClockBound, TheFirstEmptySamplesAndTheSpreadOfTheRest) {
    // The first three of 15 empty samples pay for first uses (CUPTI's first start): left out.
    auto log = log_of(10, 10.1, 100);
    log.empty.clear();
    for (double ms : {3.0, 2.0, 1.5}) log.empty.push_back({ms, 0});
    for (int i = 0; i < 12; ++i) log.empty.push_back({i < 9 ? 0.1 : 0.3, 0});
    auto b = check_clock_bound(log, line_of(10, 0.1, 100));
    EXPECT_NEAR(b.fixed_ms, 0.1, 1e-9);
    EXPECT_NEAR(b.fixed_spread_ms, 0.2, 1e-9);  // the upper quartile's lead
    EXPECT_NEAR(b.allowance_ms, clock_bound_limits{}.abs_ms + 0.05 * 10.1 + 2 * 0.2, 1e-9);
}

TEST(ClockBound, TheEagerLoopsCostBetweenCallsIsAllowed) {
    // 1000 calls of 10 us reported; the loop costs 2 us a call outside the timed calls.
    auto log = log_of(10, 0.1 + 10 + 2, 1000);
    EXPECT_FALSE(check_clock_bound(log, line_of(10, 0.01, 1000)).held);
    for (int i = 0; i < 5; ++i) log.empty.push_back({0.1 + 200 * 0.002, 200});
    auto b = check_clock_bound(log, line_of(10, 0.01, 1000));
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.loop_ms_per_call, 0.002, 1e-9);
}

TEST(ClockBound, TheSpotCopiesTimeComesOutOfItsWindowUpToACap) {
    // 48 calls of 0.04 ms; each sample copied 2 outputs as they returned, cold, in 0.9 ms on the
    // harness's clock; the empty samples' copies took 0.03 ms each (cap 0.3 + 8 * 0.03 = 0.54 ms).
    const double reported = 48 * 0.04;
    auto log = log_of(10, 0.1 + reported + 0.9, 48);
    for (int i = 0; i < 5; ++i) log.empty.push_back({0.1 + 0.06, 200, 2, 0.06});
    for (auto& w : log.timed) w.copies = 2, w.copy_ms = 0.9;
    auto b = check_clock_bound(log, line_of(10, 0.04, 48));
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.copy_cap_ms, 0.54, 1e-9);
    EXPECT_NEAR(b.copy_ms, 0.9, 1e-9);
    EXPECT_NEAR(b.excess_ms, 0.0, 1e-9);
    EXPECT_NEAR(b.loop_ms_per_call, 0.0, 1e-9);  // the empty samples' copies are theirs, not the loop's
    EXPECT_EQ(b.to_json()["copies_ms"], 0.9);
    EXPECT_EQ(b.to_json()["copy_cap_ms"], 0.54);
    // Unsaid, the same windows break the bound: 0.9 ms missing, over 0.4 + 5% of 2.92.
    for (auto& w : log.timed) w.copies = 0, w.copy_ms = 0;
    EXPECT_FALSE(check_clock_bound(log, line_of(10, 0.04, 48)).held);
}

TEST(ClockBound, CopiesExplainNoMoreThanCopiesCan) {
    // A result 2x faster than its windows: saying the copies took the missing time does not help
    // past the cap a copy, nor past 8 copies a sample.
    const double reported = 100 * 0.05;
    auto log = log_of(10, 0.1 + 2 * reported, 100);
    for (int i = 0; i < 5; ++i) log.empty.push_back({0.1 + 0.02, 200, 2, 0.02});  // 0.01 ms a copy
    for (auto& w : log.timed) w.copies = 2, w.copy_ms = reported;
    auto b = check_clock_bound(log, line_of(10, 0.05, 100));
    EXPECT_FALSE(b.held);
    EXPECT_NEAR(b.copy_ms, 2 * (0.3 + 8 * 0.01), 1e-9);
    for (auto& w : log.timed) w.copies = 1000;
    b = check_clock_bound(log, line_of(10, 0.05, 100));
    EXPECT_FALSE(b.held);
    EXPECT_NEAR(b.copy_ms, 8 * 0.38, 1e-9);
}

TEST(ClockBound, CopiesNeverExplainMoreThanHalfAWindow) {
    // A relay over the harness's socket said every sample copied 8 outputs for 100 ms: at most
    // half of each 1.4 ms window comes out, and the 0.01 ms it reports is caught.
    auto log = log_of(10, 1.4, 10);
    for (int i = 0; i < 5; ++i) log.empty.push_back({0.1 + 0.05, 0, 1, 0.05});
    for (auto& w : log.timed) w.copies = 8, w.copy_ms = 100;
    auto b = check_clock_bound(log, line_of(10, 0.001, 10));
    EXPECT_FALSE(b.held) << b.to_json().dump();
    EXPECT_NEAR(b.copy_ms, 0.7, 1e-9);
    // An honest sample's copies, well under half of it, come out whole.
    for (auto& w : log.timed) w.copies = 2, w.copy_ms = 0.5;
    b = check_clock_bound(log, line_of(10, 0.08, 10));
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.copy_ms, 0.5, 1e-9);
}

TEST(ClockBound, MarkedCopiesComeOutAsTheParentStampedThem) {
    // 48 calls of 0.04 ms reported, a third short of the 2.88 ms they took; each sample copied 2
    // outputs in 0.1 ms on the parent's stamps (+ 0.02 ms of Python steps each, noted before the
    // import). The harness's word for them, raised by the missing time (a float rewritten in
    // place), explained it within the cap.
    const double real = 48 * 0.06, reported = 48 * 0.04;
    auto log = log_of(10, 0.1 + real + 0.14, 48);
    for (int i = 0; i < 5; ++i) log.empty.push_back({0.1 + 0.06, 200, 2, 0.06, 2, 0.05});
    for (auto& w : log.timed) w.copies = 2, w.copy_ms = real - reported + 0.14, w.pauses = 2, w.paused_ms = 0.1;
    EXPECT_TRUE(check_clock_bound(log, line_of(10, 0.04, 48)).held);  // unmarked: the word, within its cap
    log.copy_steps_ms = 0.02;
    auto b = check_clock_bound(log, line_of(10, 0.04, 48));
    EXPECT_FALSE(b.held) << b.to_json().dump();
    EXPECT_NEAR(b.copy_ms, 0.14, 1e-9);
    EXPECT_NEAR(b.excess_ms, real - reported, 1e-9);
    // An honest harness says what its copies took; the stamps never raise it.
    for (auto& w : log.timed) w.copy_ms = 0.12;
    b = check_clock_bound(log, line_of(10, 0.06, 48));
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.copy_ms, 0.12, 1e-9);
    // Copies the harness did not mark (untimed: a view that is not plain memory) take nothing out.
    for (auto& w : log.timed) w.pauses = 0, w.paused_ms = 0;
    EXPECT_NEAR(check_clock_bound(log, line_of(10, 0.06, 48)).copy_ms, 0.0, 1e-9);
}

TEST(ClockBound, MorePausesThanCopiesIsSomebodyElsesMessage) {
    auto log = log_of(10, 10.1, 100);
    log.copy_steps_ms = 0.02;
    for (auto& w : log.timed) w.copies = 1, w.copy_ms = 0.1, w.pauses = 3, w.paused_ms = 0.3;
    auto b = check_clock_bound(log, line_of(10, 0.1, 100));
    EXPECT_FALSE(b.held);
    EXPECT_NE(b.reason.find("marked 3 copies' pauses but the harness says it made 1"), std::string::npos) << b.reason;
}

TEST(ClockBound, CuptiGetsTheGapsBetweenNodesThatItDoesNotCount) {
    // 1000 calls of 2.9 us of kernel, 0.6 us of gap each: the window is 20% over the kernels.
    auto log = log_of(10, 0.1 + 1000 * 0.0035, 1000);
    EXPECT_FALSE(check_clock_bound(log, line_of(10, 0.0029, 1000, "cupti")).held);
    log.gap_nodes = 200;
    log.gap_window_ms = 0.1 + 200 * 0.0016;  // a tiny kernel of 1 us + 0.6 us of gap a node
    log.gap_busy_ms = 200 * 0.001;
    auto b = check_clock_bound(log, line_of(10, 0.0029, 1000, "cupti"));
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.gap_ms_per_op, 0.0006, 1e-9);
    // Not for another timer: the graph's events count the gaps.
    EXPECT_FALSE(check_clock_bound(log, line_of(10, 0.0029, 1000, "cuda_graph")).held);
}

TEST(ClockBound, CuptisPrimedWindowsGetTheTighterMargin) {
    // 16 calls of 0.19 ms on CUPTI (3.04 ms), 0.06 ms of each window unexplained (an honest H100
    // sample, primed) and a gap probe of 1.5 us a node: held; a report 10% short is caught.
    auto log = log_of(10, 0.12 + 16 * 0.19 + 0.06, 16, 0.12);
    log.gap_nodes = 200;
    log.gap_busy_ms = 0.2;
    log.gap_window_ms = 0.12 + 0.2 + 200 * 0.0015;
    auto b = check_clock_bound(log, line_of(10, 0.19, 16, "cupti"));
    EXPECT_TRUE(b.held) << b.reason;
    EXPECT_NEAR(b.gap_ms_per_op, 0.0015, 1e-9);
    EXPECT_NEAR(b.allowance_ms, 0.05 + 0.02 * b.window_ms + 16 * 0.0015 * 2.5, 1e-9);
    EXPECT_FALSE(check_clock_bound(log, line_of(10, 0.19 * 0.9, 16, "cupti")).held);
    // The CPU's margin on another timer: the same 10% short gets through there.
    EXPECT_TRUE(check_clock_bound(log, line_of(10, 0.19 * 0.9, 16, "cuda_graph")).held);
    // Each GPU operation of a call gets a gap, whichever rule timed it: one a call under "span"
    // voided honest runs of the bundled rmsnorm on an H100 (several kernels a call).
    json many = line_of(10, 0.19, 16, "cupti");
    many["gpu_ops_per_call"] = 6;
    for (const char* rule : {"span", "busy"}) {
        many["kernel_time_rule"] = rule;
        EXPECT_NEAR(check_clock_bound(log, many).allowance_ms, b.allowance_ms + 5 * 16 * 0.0015 * 2.5, 1e-9) << rule;
    }
    many["gpu_ops_per_call"] = 400;  // at most max_ops_per_call of them
    EXPECT_NEAR(check_clock_bound(log, many).allowance_ms, b.allowance_ms + 15 * 16 * 0.0015 * 2.5, 1e-9);
    // Nothing is allowed once a sample beyond the gaps: the probe's 200 nodes taking 5 ms more
    // than their kernels raise the gap a node, not a launch allowance.
    log.gap_window_ms = 0.12 + 0.2 + 5.0;
    EXPECT_NEAR(check_clock_bound(log, line_of(10, 0.19, 16, "cupti")).allowance_ms,
                0.05 + 0.02 * b.window_ms + 16 * (5.0 / 200) * 2.5, 1e-9);
}

TEST(ClockBound, PerCallEventsOnTheEagerPathAreNotBounded) {
    auto b = check_clock_bound(log_of(10, 10.1, 100), line_of(10, 0.01, 100, "cuda_events"));
    EXPECT_TRUE(b.held);
    EXPECT_FALSE(b.lower);
    EXPECT_EQ(b.to_json()["bound"], "not applied");
}

TEST(ClockBound, TheRunsTimeMustBeTheMedianOfItsSamples) {
    json line = line_of(10, 0.1, 100);
    line["ms"] = 0.04;  // rewritten after the samples were taken
    auto b = check_clock_bound(log_of(10, 10.1, 100), line);
    EXPECT_FALSE(b.held);
    EXPECT_NE(b.reason.find("not the median"), std::string::npos) << b.reason;
}

TEST(ClockBound, TheResultMustMatchWhatWasReleased) {
    EXPECT_NE(check_clock_bound(log_of(9, 10.1, 100), line_of(10, 0.1, 100)).reason.find("released 9"),
              std::string::npos);
    EXPECT_NE(check_clock_bound(log_of(10, 10.1, 50), line_of(10, 0.1, 100)).reason.find("released for 50"),
              std::string::npos);
    auto none = log_of(10, 10.1, 100);
    none.empty.clear();
    EXPECT_FALSE(check_clock_bound(none, line_of(10, 0.1, 100)).held);
}

TEST(ClockBound, AnOkRunThatNeverConnectedOrBrokeTheProtocolIsInvalid) {
    parent_clock_log never;
    EXPECT_FALSE(check_clock_bound(never, line_of(10, 0.1, 100)).held);
    auto broke = log_of(10, 10.1, 100);
    broke.error = "an unknown message: \"x\"";
    json incorrect = line_of(10, 0.1, 100);
    incorrect["status"] = "incorrect";
    incorrect["reason"] = "check call: wrong";
    auto b = check_clock_bound(broke, incorrect);
    EXPECT_FALSE(b.held);
    apply_clock_bound(incorrect, b);
    EXPECT_EQ(incorrect["status"], "invalid");
    EXPECT_NE(incorrect["reason"].get<std::string>().find("check call: wrong"), std::string::npos);
}

// Only an overshoot of an ok run is the clock's alone (verify runs such a run again once): not a
// broken protocol, not a run that was already incorrect.
TEST(ClockBound, OnlyAnOkRunsOvershootIsTheClocksAlone) {
    json line = line_of(10, 0.09, 100);
    apply_clock_bound(line, check_clock_bound(log_of(10, 10.1, 100), line));
    EXPECT_EQ(line["parent_clock"]["only_cause"], true);
    EXPECT_TRUE(parent_clock_only_cause(line));

    json incorrect = line_of(10, 0.09, 100);
    incorrect["status"] = "incorrect";
    incorrect["reason"] = "check call: wrong";
    apply_clock_bound(incorrect, check_clock_bound(log_of(10, 10.1, 100), incorrect));
    EXPECT_FALSE(parent_clock_only_cause(incorrect));

    auto broke = log_of(10, 10.1, 100);
    broke.error = "an unknown message: \"x\"";
    json forged = line_of(10, 0.1, 100);
    apply_clock_bound(forged, check_clock_bound(broke, forged));
    EXPECT_EQ(forged["status"], "invalid");
    EXPECT_FALSE(parent_clock_only_cause(forged));

    // Workloads: every one that is not ok must be the clock's alone.
    json held = line_of(10, 0.1, 100);
    held["name"] = "A";
    json w = json{{"status", "invalid"}, {"ok", false}, {"workloads", {line, held}}};
    EXPECT_TRUE(parent_clock_only_cause(w));
    w["workloads"].push_back(incorrect);
    EXPECT_FALSE(parent_clock_only_cause(w));
    EXPECT_FALSE(parent_clock_only_cause(json{{"status", "invalid"}, {"workloads", {held}}}));
}

TEST(ClockBound, RunsWithoutSamplesAreLeftAlone) {
    json err{{"status", "error"}, {"reason", "call: raised"}};
    auto b = check_clock_bound(parent_clock_log{}, err);
    EXPECT_FALSE(b.applies);
    apply_clock_bound(err, b);
    EXPECT_EQ(err["status"], "error");
    EXPECT_FALSE(err.contains("parent_clock"));
}

// ---- the server, over its socket ----------------------------------------------------------

namespace {
int connect_to(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::copy(path.begin(), path.end(), a.sun_path);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string read_line(int fd) {  // one message (a record of the SOCK_SEQPACKET socket)
    char buf[256];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    std::string s(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}
}  // namespace

TEST(ParentClock, TimesEachReleasedWindowAndHandsOutFreshSecrets) {
    parent_clock clock;
    const int fd = connect_to(clock.address());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(write_all(fd, "hello 1\nready empty 0\n"));
    const std::string go1 = read_line(fd);
    ASSERT_TRUE(write_all(fd, "done 0 0\nimport\nready timed 7\n"));
    const std::string go2 = read_line(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(write_all(fd, "done 2 150\nend\n"));
    ::close(fd);
    const auto log = clock.finish();
    EXPECT_EQ(go1.substr(0, 3), "go ");
    EXPECT_EQ(go1.size(), 3u + 16u);
    EXPECT_NE(go1, go2);
    EXPECT_TRUE(log.connected);
    EXPECT_TRUE(log.imported);
    EXPECT_TRUE(log.ended);
    EXPECT_EQ(log.error, "");
    ASSERT_EQ(log.empty.size(), 1u);
    ASSERT_EQ(log.timed.size(), 1u);
    EXPECT_EQ(log.timed[0].calls, 7);
    EXPECT_EQ(log.timed[0].copies, 2);
    EXPECT_DOUBLE_EQ(log.timed[0].copy_ms, 0.15);
    // The window leaves out the writer's waits for a CPU (this process's, here): with them, the sleep.
    EXPECT_GE(log.timed[0].ms + log.waited_ms, 20.0 - 0.05);
    EXPECT_LT(log.empty[0].ms, log.timed[0].ms);
    EXPECT_EQ(log.stamped, 1u);  // the window ended at the kernel's stamp of "done", not at the read
}

TEST(ParentClock, StampsTheCopiesPausesInsideAWindow) {
    parent_clock clock;
    const int fd = connect_to(clock.address());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(write_all(fd, "hello 1\nready empty 0\n"));
    read_line(fd);
    ASSERT_TRUE(write_all(fd, "done 0 0\nnote copy_steps_ms 0.025\nimport\nready timed 7\n"));
    read_line(fd);
    ASSERT_TRUE(write_all(fd, "pause\n"));
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    ASSERT_TRUE(write_all(fd, "resume\n"));
    ASSERT_TRUE(write_all(fd, "pause\nresume\n"));  // one record: one stamp for both, no time
    ASSERT_TRUE(write_all(fd, "done 3 15000 2\nend\n"));
    ::close(fd);
    const auto log = clock.finish();
    EXPECT_EQ(log.error, "");
    EXPECT_DOUBLE_EQ(log.copy_steps_ms, 0.025);
    ASSERT_EQ(log.timed.size(), 1u);
    EXPECT_EQ(log.timed[0].pauses, 2);
    EXPECT_EQ(log.timed[0].copies, 3);
    EXPECT_GE(log.timed[0].paused_ms, 15.0 - 0.05);
    EXPECT_LT(log.timed[0].paused_ms, 15.0 + 10.0);
    EXPECT_LE(log.timed[0].paused_ms, log.timed[0].ms + log.waited_ms + 0.05);
}

TEST(ParentClock, SaysWhenTheHarnessNeverCameBackFromACopy) {
    // A run killed while copying an output (a fault there, with every signal blocked) leaves a
    // pause with no resume: the launcher names that death (died_in_copy_line).
    for (const bool resumed : {false, true}) {
        parent_clock clock;
        const int fd = connect_to(clock.address());
        ASSERT_GE(fd, 0);
        ASSERT_TRUE(write_all(fd, "hello 1\nready empty 0\n"));
        read_line(fd);
        ASSERT_TRUE(write_all(fd, "done 0 0\nimport\nready timed 7\n"));
        read_line(fd);
        ASSERT_TRUE(write_all(fd, resumed ? "pause\nresume\n" : "pause\n"));
        ::close(fd);
        const auto log = clock.finish();
        EXPECT_EQ(log.ended_in_copy, !resumed);
    }
}

TEST(ParentClock, TheSocketIsGoneOnceTheHarnessIsConnected) {
    parent_clock clock;
    const std::string path = clock.address();
    const int fd = connect_to(path);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(write_all(fd, "hello 1\n"));
    // Nothing else can connect after the harness: the listener is closed and the path removed.
    for (int i = 0; i < 100 && std::filesystem::exists(path); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_LT(connect_to(path), 0);
    ::close(fd);
    clock.finish();
}

TEST(ParentClock, MessagesOutOfTurnAreAProtocolError) {
    for (const char* bad : {"ready timed 5\n", "hello 1\ndone 0 0\n", "hello 1\nimport\nready empty 0\n",
                            "hello 1\nready timed x\n", "hello 1\nnonsense\n", "hello 1\nready timed 5\ndone\n",
                            "hello 1\nready timed 5\ndone 2\n", "hello 1\nready timed 5\ndone -1 5\n",
                            "hello 1\nready timed 5\ndone 1 1e9\n", "hello 1\npause\n",
                            "hello 1\nready timed 5\nresume\n", "hello 1\nready timed 5\npause\npause\n",
                            "hello 1\nready timed 5\npause\ndone 1 5\n", "hello 1\nimport\nnote copy_steps_ms 1\n",
                            "hello 1\nready timed 5\nnote copy_steps_ms 1\n", "hello 1\nnote copy_steps_ms x\n",
                            "hello 1\nready timed 5\npause\nresume\ndone 1 5 0\n",
                            "hello 1\nready timed 5\ndone 1 5 1\n", "hello 1\nready timed 5\ndone 1 5 x\n"}) {
        parent_clock clock;
        const int fd = connect_to(clock.address());
        ASSERT_GE(fd, 0);
        write_all(fd, bad);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ::close(fd);
        EXPECT_NE(clock.finish().error, "") << bad;
    }
}

TEST(ParentClock, FinishWithoutAConnectionSaysSo) {
    parent_clock clock;
    const auto log = clock.finish();
    EXPECT_FALSE(log.connected);
    EXPECT_FALSE(std::filesystem::exists(clock.address()));
}

#include <gtest/gtest.h>

#include "render/render.h"

using namespace hotkernel;

TEST(render, numbers_read_as_a_person_writes_them) {
    EXPECT_EQ(format_number(0.123456), "0.1235");
    EXPECT_EQ(format_number(1234.5678), "1235");
    EXPECT_EQ(format_number(2.5), "2.5");
    EXPECT_EQ(format_number(0), "0");
    EXPECT_EQ(format_number(1e-7), "1e-07");
}

TEST(render, objects_become_aligned_lines_and_arrays_of_objects_tables) {
    json r = {{"gpu", "NVIDIA H200"}, {"bound", "memory"}, {"attainable_ms", 0.0839},
              {"kernels", json::array({{{"name", "k1"}, {"pct", 60.0}}, {{"name", "k2"}, {"pct", 40.0}}})}};
    std::string text = render_text(r);
    EXPECT_NE(text.find("gpu            NVIDIA H200"), std::string::npos) << text;
    EXPECT_NE(text.find("kernels:"), std::string::npos);
    EXPECT_NE(text.find("name  pct"), std::string::npos) << text;
    EXPECT_NE(text.find("k2    40"), std::string::npos) << text;
}

TEST(render, long_tables_are_cut_with_a_pointer_to_json) {
    json rows = json::array();
    for (int i = 0; i < 50; ++i) rows.push_back({{"i", i}});
    std::string text = render_text(json{{"rows", rows}}, 10);
    EXPECT_NE(text.find("40 more rows"), std::string::npos);
}

TEST(render, warnings_and_flags_read_as_their_messages) {
    json ids = {{"warnings", json::array({{{"id", "single_run"}, {"message", "n = 1: use n >= 2"}},
                                          {{"id", "no_flops"}, {"message", "pass --flops"}}})},
                {"flags", json::array()}};
    json strings = {{"warnings", json::array({"n = 1: use n >= 2", "pass --flops"})}, {"flags", json::array()}};
    const std::string text = render_text(ids);
    EXPECT_EQ(text, render_text(strings));
    EXPECT_NE(text.find("warnings  n = 1: use n >= 2, pass --flops"), std::string::npos) << text;
    EXPECT_EQ(text.find("single_run"), std::string::npos) << text;
}

#include <gtest/gtest.h>

#include <filesystem>

#include "python/interpreter.h"
#include "scaffold/target_spec.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/hash.h"

using namespace hotkernel;
namespace fs = std::filesystem;

TEST(target_spec, parse_shape_text_accepts_x_joined_sizes) {
    EXPECT_EQ(parse_shape_text("4096x8192"), (std::vector<std::int64_t>{4096, 8192}));
    EXPECT_EQ(parse_shape_text(" 8192 "), (std::vector<std::int64_t>{8192}));
    EXPECT_EQ(parse_shape_text("2X3x4"), (std::vector<std::int64_t>{2, 3, 4}));
}

TEST(target_spec, parse_shape_text_rejects_bad_shapes_with_the_fix) {
    for (const char* bad : {"4096y8192", "", "x", "4096x", "0x8", "-1", "8x1.5", "8 x 9z"}) {
        try {
            parse_shape_text(bad);
            FAIL() << bad;
        } catch (const tool_error& e) {
            EXPECT_NE(std::string(e.what()).find("like '4096x8192'"), std::string::npos) << e.what();
        }
    }
}

TEST(target_spec, parse_extra_item_and_its_errors) {
    auto ns = parse_extra_item("w:8192x16");
    EXPECT_EQ(ns.name, "w");
    EXPECT_EQ(ns.shape, (std::vector<std::int64_t>{8192, 16}));
    EXPECT_THROW(parse_extra_item("w8192"), tool_error);
    EXPECT_THROW(parse_extra_item("1w:8"), tool_error);
    EXPECT_THROW(parse_extra_item("w:8y8"), tool_error);
}

TEST(target_spec, parse_callable_spec_modules_and_files) {
    auto m = parse_callable_spec("torch.nn.functional:gelu", "from");
    EXPECT_EQ(m.module, "torch.nn.functional");
    EXPECT_EQ(m.attr, "gelu");
    EXPECT_FALSE(m.is_file());
    auto f = parse_callable_spec("./my kernels/k.py:Fused.run", "from");
    EXPECT_TRUE(f.is_file());
    EXPECT_EQ(f.attr, "Fused.run");
    for (const char* bad : {"gelu", "torch.nn:", ":gelu", "torch nn:gelu", "torch.nn:ge-lu"})
        EXPECT_THROW(parse_callable_spec(bad, "from"), tool_error) << bad;
}

TEST(target_spec, python_literal_maps_json_to_python) {
    json v = {{"a", nullptr}, {"b", true}, {"c", json::array({1, 2})}, {"d", "q\"s"}, {"e", 0.5}, {"f", 8388608.0},
              {"g", json::object({{"w", json::array({8})}})}};
    EXPECT_EQ(python_literal(v), R"({"a": None, "b": True, "c": [1, 2], "d": "q\"s", "e": 0.5, "f": 8388608, "g": {"w": [8]}})");
    EXPECT_EQ(python_literal(json{{"a", 1}}, 4), "{\n    \"a\": 1,\n}");
}

TEST(target_spec, rendered_scripts_differ_only_in_role_and_comments) {
    json t = {{"name", "lin"}, {"from", "torch.nn.functional:linear"}, {"shape", {16, 32}},
              {"extra", {{"w", {24, 32}}, {"b", {24}}}}, {"rotate", {"x"}}, {"inputs", nullptr}};
    const std::string b = render_target_script(t, "baseline");
    const std::string c = render_target_script(t, "candidate");
    EXPECT_NE(b.find("from torch.nn.functional import linear as _baseline"), std::string::npos);
    EXPECT_NE(c.find("def kernel(x, w, b):\n"), std::string::npos);
    EXPECT_NE(c.find("    return _baseline(x, w, b)\n"), std::string::npos);
    EXPECT_NE(b.find("hk.main(TARGET, kernel, role=\"baseline\")"), std::string::npos);
    EXPECT_NE(c.find("hk.main(TARGET, kernel, role=\"candidate\")"), std::string::npos);
    EXPECT_EQ(render_target_script(t, "candidate"), c);  // deterministic: new compares it with the file on disk
    t["from"] = "./k.py:f";
    t["inputs"] = {"x", "w_q", "scales"};
    const std::string d = render_target_script(t, "candidate");
    EXPECT_NE(d.find("_baseline = hk.load_callable(TARGET[\"from\"], __file__)"), std::string::npos);
    EXPECT_NE(d.find("def kernel(x, w_q, scales):"), std::string::npos);
}

TEST(target_spec, contract_protocol_is_read_from_the_text) {
    EXPECT_EQ(parse_contract_protocol("\"\"\"doc\"\"\"\n\nPROTOCOL = 3\nimport os\n"), 3);
    EXPECT_EQ(parse_contract_protocol("PROTOCOL=12\n"), 12);
    EXPECT_EQ(parse_contract_protocol("x = 1\n# PROTOCOL = 3\n"), 0);
    EXPECT_EQ(parse_contract_protocol(std::string(embedded_python("hotkernel_contract.py"))), 3);
    EXPECT_EQ(contract_protocol(), 3);
}

TEST(target_spec, inspect_contract_file_tells_match_stale_and_missing) {
    const fs::path dir = make_temp_dir("hk-vendored-");
    auto missing = inspect_contract_file(dir);
    EXPECT_FALSE(missing.exists);
    EXPECT_EQ(missing.embedded_protocol, 3);
    EXPECT_FALSE(missing.matches_embedded);

    const std::string own(embedded_python("hotkernel_contract.py"));
    write_file_atomic(dir / "hotkernel_contract.py", own);
    auto same = inspect_contract_file(dir);
    EXPECT_TRUE(same.exists);
    EXPECT_TRUE(same.matches_embedded);
    EXPECT_EQ(same.protocol, 3);
    EXPECT_EQ(same.sha256, sha256_hex(own));
    EXPECT_EQ(same.to_json()["matches_embedded"], true);

    write_file_atomic(dir / "hotkernel_contract.py", "\"\"\"old\"\"\"\nPROTOCOL = 2\n");
    auto old = inspect_contract_file(dir / "hotkernel_contract.py");
    EXPECT_TRUE(old.exists);
    EXPECT_FALSE(old.matches_embedded);
    EXPECT_EQ(old.protocol, 2);
    fs::remove_all(dir);
}

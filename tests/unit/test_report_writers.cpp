// SPDX-License-Identifier: MIT
// The JSON and CSV writers every report is written with (common/json_writer.h,
// common/csv_writer.h): layouts, escaping and number formats, pinned byte for byte because the
// golden outputs depend on them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/csv_reader.h"
#include "common/csv_writer.h"
#include "common/json_reader.h"
#include "common/json_writer.h"

using namespace fastsim;

TEST_CASE("json writer: one item per line, inline objects and arrays, a newline at the end", "[report_writers]") {
    JsonWriter j;
    j.begin_object(JsonLayout::one_per_line);
    j.key("name").string("a \"b\"\\\n").key("count").integer(std::uint64_t{42}).key("delta").integer(-3);
    j.key("seconds").number(0.1).key("cycles").number(12345678901.0).key("ok").boolean(true).key("none").null();
    j.key("inline").begin_object().key("x").number(1).key("y").begin_array().integer(1).integer(2).end_array();
    j.end_object();
    j.key("rows").begin_array(JsonLayout::one_per_line);
    j.begin_object().key("groups").begin_array(JsonLayout::one_per_line).begin_object().end_object().end_array();
    j.end_object();
    j.end_array();
    j.key("empty").begin_array(JsonLayout::one_per_line).end_array();
    j.end_object();
    CHECK(j.text() ==
          "{\n"
          "  \"name\": \"a \\\"b\\\"\\\\\\u000a\",\n"
          "  \"count\": 42,\n"
          "  \"delta\": -3,\n"
          "  \"seconds\": 0.1,\n"
          "  \"cycles\": 12345678901,\n"
          "  \"ok\": true,\n"
          "  \"none\": null,\n"
          "  \"inline\": {\"x\": 1, \"y\": [1, 2]},\n"
          "  \"rows\": [\n"
          "    {\"groups\": [\n"
          "      {}\n"
          "    ]}\n"
          "  ],\n"
          "  \"empty\": [\n"
          "  ]\n"
          "}\n");
    // What it writes reads back.
    CHECK_NOTHROW(parse_json(j.text(), "writer"));
}

TEST_CASE("json writer: compact style, continued lines and exact decimals", "[report_writers]") {
    JsonWriter j(JsonStyle::compact);
    j.begin_object(JsonLayout::continued_lines).key("events").begin_array(JsonLayout::one_per_line);
    j.begin_object().key("ts").exact_decimal(12976485, 6).key("dur").exact_decimal(3000000, 6).end_object();
    j.begin_object().key("ts").exact_decimal(1, 6).key("args").begin_object().end_object().end_object();
    j.end_array().key("unit").string("ns").key("other").begin_object().key("n").integer(7).end_object();
    j.end_object();
    CHECK(j.text() ==
          "{\"events\":[\n"
          "{\"ts\":12.976485,\"dur\":3},\n"
          "{\"ts\":0.000001,\"args\":{}}\n"
          "],\n"
          "\"unit\":\"ns\",\n"
          "\"other\":{\"n\":7}}\n");
}

TEST_CASE("json writer: a value without its key or an unbalanced end is refused", "[report_writers]") {
    JsonWriter j;
    j.begin_object();
    CHECK_THROWS_AS(j.integer(1), std::logic_error);
    CHECK_THROWS_AS(j.end_array(), std::logic_error);
}

TEST_CASE("csv writer: the header and every row come from one column list", "[report_writers]") {
    struct Row {
        std::string name;
        double seconds;
        std::uint64_t count;
    };
    const CsvWriter<Row> csv({
        {"name", [](const Row& r) { return CsvCell::text(r.name); }},
        {"seconds", [](const Row& r) { return CsvCell::number(r.seconds); }},
        {"count", [](const Row& r) { return r.count ? CsvCell::integer(r.count) : CsvCell::empty(); }},
        {"note", [](const Row& r) { return CsvCell::quoted_text(r.name); }},
    });
    const std::vector<Row> rows{{"fc1", 0.5, 3}, {"a,\"b\"", 1e-12, 0}};
    CHECK(csv.table(rows) ==
          "name,seconds,count,note\n"
          "fc1,0.5,3,\"fc1\"\n"
          "\"a,\"\"b\"\"\",1e-12,,\"a,\"\"b\"\"\"\n");
    // Both read back as written (the reader of every CSV fastsim writes).
    const CsvTable back = parse_csv(csv.table(rows), "t.csv");
    REQUIRE(back.rows.size() == 2);
    CHECK(back.rows[1][0] == "a,\"b\"");
    CHECK(back.rows[1][3] == "a,\"b\"");
    JsonWriter j;
    j.begin_object();
    csv.write_json_fields(j, rows[1]);
    j.end_object();
    CHECK(j.text() == "{\"name\": \"a,\\\"b\\\"\", \"seconds\": 1e-12, \"count\": null, \"note\": \"a,\\\"b\\\"\"}\n");
}

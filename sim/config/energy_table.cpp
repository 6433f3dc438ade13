// SPDX-License-Identifier: MIT
#include "config/energy_table.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "config/ranges.h"
#include "config/yaml_reader.h"

namespace fastsim::config {

extern const char* const kDefaultEnergyTable;
extern const char* const kDefaultEnergyTableName;

namespace {

/// One entry: {value: X, source: "..."}; both required, the value within `range`.
double entry(MapReader& section, const std::string& key, const KeyRange& range = kEnergyPj) {
    auto reader = section.map(key);
    if (!reader) throw ConfigError(section.location_of(key), "missing entry: expected {value: number, source: text}");
    const Field<double> value = reader->scalar<double>("value");
    const Field<std::string> source = reader->scalar<std::string>("source");
    reader->finish();
    if (!value.value) throw ConfigError(reader->location(), "missing value");
    if (!source.value || source.value->empty())
        throw ConfigError(reader->location(), "missing source: every figure says where it comes from");
    return in_range(value, 0.0, range);
}

}  // namespace

energy::EnergyTable load_energy_table(const std::string& path, const std::string& dram_type,
                                      const Location& dram_type_where, double exponent_kib, double mantissa_kib) {
    const Document doc = path.empty() ? Document::parse(kDefaultEnergyTable, kDefaultEnergyTableName)
                                      : Document::load(path, "energy table");
    MapReader top(doc, doc.root, "");
    energy::EnergyTable t;
    t.name = top.scalar<std::string>("name").value_or(path.empty() ? "fast-45nm" : path);
    auto section = [&](const std::string& key) {
        auto reader = top.map(key);
        if (!reader) throw ConfigError(top.location_of(key), "missing section");
        return *reader;
    };
    MapReader fmac = section("fmac");
    t.chunk_multiply_pj = entry(fmac, "chunk_multiply_pj");
    t.adder_tree_add_pj = entry(fmac, "adder_tree_add_pj");
    t.pass_accumulate_pj = entry(fmac, "pass_accumulate_pj");
    t.exponent_add_pj = entry(fmac, "exponent_add_pj");
    t.psum_add_pj = entry(fmac, "psum_add_pj");
    fmac.finish();
    MapReader conv = section("converter");
    t.comparator_pj = entry(conv, "comparator_pj");
    t.subtractor_pj = entry(conv, "subtractor_pj");
    t.shifter_pj = entry(conv, "shifter_pj");
    t.noise_add_pj = entry(conv, "noise_add_pj");
    t.lfsr_step_pj = entry(conv, "lfsr_step_pj");
    conv.finish();
    MapReader vector_unit = section("vector");
    t.vector_op_pj = entry(vector_unit, "op_pj");
    vector_unit.finish();
    MapReader sram = section("sram");
    t.sram_exponent_read_pj_per_bit = entry(sram, "exponent_read_pj_per_bit");
    t.sram_exponent_write_pj_per_bit = entry(sram, "exponent_write_pj_per_bit");
    t.sram_mantissa_read_pj_per_bit = entry(sram, "mantissa_read_pj_per_bit");
    t.sram_mantissa_write_pj_per_bit = entry(sram, "mantissa_write_pj_per_bit");
    // Optional, all three or none: energy by capacity below a sub-bank.
    const std::array<const char*, 3> fit{"exponent_subbank_kib", "mantissa_subbank_kib", "capacity_exponent"};
    const auto given = std::count_if(fit.begin(), fit.end(), [&](const char* key) { return sram.has(key); });
    if (given != 0 && given != 3)
        throw ConfigError(sram.location(),
                          "exponent_subbank_kib, mantissa_subbank_kib and capacity_exponent go "
                          "together: give all three (energy by bank capacity) or none");
    if (given == 3) {
        t.sram_exponent_subbank_kib = entry(sram, "exponent_subbank_kib", kSubbankKib);
        t.sram_mantissa_subbank_kib = entry(sram, "mantissa_subbank_kib", kSubbankKib);
        t.sram_capacity_exponent = entry(sram, "capacity_exponent", kSramAreaExponent);
    }
    // Optional, both or none: read access time by capacity.
    if (sram.has("access_ns_at_1kib") != sram.has("access_ns_exponent"))
        throw ConfigError(sram.location(),
                          "access_ns_at_1kib and access_ns_exponent go together: give both (SRAM read latency by "
                          "capacity) or neither");
    if (sram.has("access_ns_at_1kib"))
        t.sram_access = energy::SramAccessFit{entry(sram, "access_ns_at_1kib", kSramAccessNs),
                                              entry(sram, "access_ns_exponent", kSramAreaExponent)};
    sram.finish();
    MapReader dram = section("dram_pj_per_bit");
    if (!dram.has(dram_type))
        throw ConfigError(dram_type_where, "the energy table " + doc.file + " has no DRAM type '" + dram_type +
                                               "' under dram_pj_per_bit");
    t.dram_pj_per_bit = entry(dram, dram_type);
    // The other DRAM types are checked too: a broken table fails whichever type is chosen.
    for (const auto& kv : doc.root["dram_pj_per_bit"]) {
        const std::string other = kv.first.as<std::string>();
        if (other != dram_type) entry(dram, other);
    }
    dram.finish();
    MapReader leak = section("leakage");
    t.leakage_mw_per_pe = entry(leak, "mw_per_pe", kLeakageMw);
    t.leakage_mw_per_sram_kib = entry(leak, "mw_per_sram_kib", kLeakageMw);
    leak.finish();
    if (top.has("area")) {  // optional: a table without it has no area
        MapReader area = section("area");
        energy::AreaTable a;
        a.process_nm = entry(area, "process_nm", kProcessNm);
        a.chunk_multiplier_um2 = entry(area, "chunk_multiplier_um2", kAreaUm2);
        a.adder_um2_per_bit = entry(area, "adder_um2_per_bit", kAreaUm2);
        a.comparator_um2_per_bit = entry(area, "comparator_um2_per_bit", kAreaUm2);
        a.register_um2_per_bit = entry(area, "register_um2_per_bit", kAreaUm2);
        a.shifter_um2 = entry(area, "shifter_um2", kAreaUm2);
        a.fp32_adder_um2 = entry(area, "fp32_adder_um2", kAreaUm2);
        a.fp32_multiplier_um2 = entry(area, "fp32_multiplier_um2", kAreaUm2);
        a.sram.reference_kib = entry(area, "sram_reference_kib", kAreaUm2);
        if (!(a.sram.reference_kib > 0))
            throw ConfigError(area.location_of("sram_reference_kib"), "the fit's reference capacity must be > 0 KiB");
        a.sram.reference_um2 = entry(area, "sram_reference_um2", kAreaUm2);
        a.sram.exponent = entry(area, "sram_exponent", kSramAreaExponent);
        a.sram.subbank_kib = entry(area, "sram_subbank_kib", kAreaUm2);
        area.finish();
        t.area = a;
    }
    top.finish();
    return energy::for_banks(t, exponent_kib, mantissa_kib);
}

}  // namespace fastsim::config

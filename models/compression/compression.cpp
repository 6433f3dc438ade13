// SPDX-License-Identifier: MIT
// The compression schemes' descriptor table (docs/architecture.md, "Where to make a change"):
// one row per scheme, each implemented in its own file under models/compression/impl/.
#include <cmath>

#include "common/checked.h"
#include "compression/compressor.h"

namespace fastsim::compression {

// Each scheme's implementation (models/compression/impl/<name>.cpp).
const Compressor& none_compressor();
const Compressor& topk_compressor();
const Compressor& dgc_compressor();
const Compressor& powersgd_compressor();
const Compressor& onebit_compressor();
const Compressor& threshold_compressor();
const Compressor& terngrad_compressor();

namespace {

constexpr std::array<CompressorDescriptor, kSchemeCount> kCompressors{{
    {Scheme::none, "none", none_compressor},
    {Scheme::topk, "topk", topk_compressor},
    {Scheme::dgc, "dgc", dgc_compressor},
    {Scheme::powersgd, "powersgd", powersgd_compressor},
    {Scheme::onebit, "onebit", onebit_compressor},
    {Scheme::threshold, "threshold", threshold_compressor},
    {Scheme::terngrad, "terngrad", terngrad_compressor},
}};

static_assert(rows_in_enum_order(kCompressors, &CompressorDescriptor::scheme),
              "every Scheme needs its row in kCompressors, in enumerator order");

}  // namespace

const std::array<CompressorDescriptor, kSchemeCount>& compressor_descriptors() { return kCompressors; }

const Compressor& compressor_of(Scheme scheme) { return kCompressors[static_cast<std::size_t>(scheme)].compressor(); }

const EnumNames<Scheme, kSchemeCount>& enum_names(Scheme) {
    static constexpr EnumNames<Scheme, kSchemeCount> kNames =
        names_of_rows(kCompressors, &CompressorDescriptor::scheme);
    return kNames;
}

void Compressor::init(TensorState& state, const TensorShape& shape, std::size_t workers, const Params& /*params*/,
                      std::uint64_t& /*rng*/) const {
    state.residual.assign(workers, std::vector<float>(shape.size(), 0.0f));
    if (applies_momentum()) state.velocity.assign(workers, std::vector<float>(shape.size(), 0.0f));
}

std::uint64_t sparse_entries(const Params& params, std::uint64_t values) {
    if (values == 0) return 0;
    const double kept = std::ceil(params.density * static_cast<double>(values));
    if (kept >= static_cast<double>(values)) return values;
    return kept < 1 ? 1 : static_cast<std::uint64_t>(kept);
}

std::uint64_t sparse_bytes(std::uint64_t entries) {
    return checked_mul(entries, kValueBytes + kIndexBytes, "bytes of a sparse gradient");
}

std::uint64_t quantised_bytes(std::uint64_t values, std::uint64_t bits_per_value, std::uint64_t scales_per_bucket) {
    const std::uint64_t buckets = values / kBucketValues + (values % kBucketValues != 0);
    const std::uint64_t bits = checked_mul(values, bits_per_value, "bits of a quantised gradient");
    return bits / 8 + (bits % 8 != 0) +
           checked_mul(buckets * scales_per_bucket, kValueBytes, "scales of a quantised gradient");
}

}  // namespace fastsim::compression

// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "config/yaml_reader.h"

namespace fastsim::config {

/// The values a numeric key accepts (docs/config.md#ranges): every key's range is one of
/// these, checked where the key is read, so every later unit conversion and product of it is
/// exact or checked. Bounds are inclusive.
struct KeyRange {
    std::string_view keys;  ///< the keys it applies to, as docs/config.md names them
    std::string_view unit;  ///< of the key's value; empty for counts
    double min = 0, max = 0;
    bool zero_allowed = false;  ///< 0 is accepted below a positive `min` (a latency of 0 or 1 ps … 1 s)
    std::string_view reason;    ///< why these bounds
    double step = 0;            ///< if > 0, only min, min + step, … max (whole 2-bit chunks)

    [[nodiscard]] bool admits(double v) const {
        return (v >= min && v <= max && (step == 0 || std::fmod(v - min, step) == 0)) || (zero_allowed && v == 0);
    }
    /// `noun` with the range, as messages print it: "a value from 1 to 100000 MHz", or
    /// "0, or a value from 0.001 to 1000000000 ns" when zero is allowed, or "2, 4, 6 or 8 bits"
    /// for a stepped range.
    [[nodiscard]] std::string describe(std::string_view noun = "a value") const;
    /// The range as docs/config.md's tables print it: "1 … 4096", "0, or 0.001 … 1000000000",
    /// "2, 4, 6, 8".
    [[nodiscard]] std::string table_text() const;
};

/// A bound or value as messages and docs print it (report files use fastsim::format_number):
/// integers below 2^53 in full, other numbers in the shortest form that reads back exactly.
std::string exact_number(double v);

// Run configs (fastsim run, validate, plan, compare; nodes also in fastsim train).
extern const KeyRange kWorkloadBatch;
extern const KeyRange kWorkloadSteps;  ///< precision.schedule[].from_step is checked against the value
extern const KeyRange kClockMhz;
extern const KeyRange kArrayDim;
extern const KeyRange kConverterLanes;
extern const KeyRange kConverterLatency;
extern const KeyRange kVectorLanes;
extern const KeyRange kVectorOpsPerLane;
extern const KeyRange kSramCapacityKib;
extern const KeyRange kSramBitsPerCycle;
extern const KeyRange kBandwidthGbPerS;
extern const KeyRange kLatencyNs;
extern const KeyRange kDramCapacityGib;
extern const KeyRange kMaxTileRows;
extern const KeyRange kNodeArrays;
extern const KeyRange kGroupCount;  ///< also bounds the nodes of all groups together
extern const KeyRange kPipelineStages;
extern const KeyRange kPipelineMicrobatches;
extern const KeyRange kTreeFanout;
extern const KeyRange kTrainWorkers;
extern const KeyRange kTargetAccuracy;
extern const KeyRange kSyncServers;
extern const KeyRange kSyncServerNodes;
extern const KeyRange kSyncDensity;
extern const KeyRange kPowerSgdRank;
extern const KeyRange kSyncThreshold;
extern const KeyRange kSyncStaleness;
extern const KeyRange kSyncBucketMib;
extern const KeyRange kSyncMessageLevelMaxRanks;
extern const KeyRange kLinkEnergyPjPerBit;
// bfp and bfp_report
extern const KeyRange kGroupSize;
extern const KeyRange kExponentBits;
extern const KeyRange kExponentBias;
extern const KeyRange kLfsrBits;
extern const KeyRange kNoiseBits;
extern const KeyRange kReportMantissaBits;
extern const KeyRange kTensorScale;
extern const KeyRange kTensorDof;
extern const KeyRange kTensorCount;
extern const KeyRange kMantissaWidth;  ///< the fMAC array's widths: whole 2-bit chunks
// energy tables
extern const KeyRange kEnergyPj;
extern const KeyRange kLeakageMw;
extern const KeyRange kAreaUm2;
extern const KeyRange kSramAreaExponent;
extern const KeyRange kSramAccessNs;
extern const KeyRange kSubbankKib;
extern const KeyRange kProcessNm;
extern const KeyRange kMaxWorkSeconds;
// traces
extern const KeyRange kLayerSize;
extern const KeyRange kLayerPadding;
// fastsim train
extern const KeyRange kTrainEpochs;
extern const KeyRange kTrainBatch;
extern const KeyRange kLearningRate;
extern const KeyRange kMomentum;
extern const KeyRange kWeightDecay;
extern const KeyRange kBlasThreads;
extern const KeyRange kMaxIterations;
extern const KeyRange kSampleLimit;
extern const KeyRange kScheduleThreshold;
extern const KeyRange kScheduleStartBits;
extern const KeyRange kScheduleStepBits;
extern const KeyRange kScheduleMaxBits;
extern const KeyRange kCheckEvery;

/// Every range above, in the order of docs/config.md's table.
const std::vector<const KeyRange*>& all_key_ranges();

/// docs/config.md's range table (Markdown), generated from all_key_ranges().
std::string key_range_table_markdown();

/// ConfigError at `where` naming the range unless `range` admits `v` (`text`: v as written).
void check_range(double v, const std::string& text, const KeyRange& range, const Location& where);

/// ConfigError at `where` naming the range unless `range` admits `v` (integers printed whole).
template <typename T>
void check_in_range(T v, const KeyRange& range, const Location& where) {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
    if constexpr (std::is_integral_v<T>)
        check_range(static_cast<double>(v), std::to_string(v), range, where);
    else
        check_range(static_cast<double>(v), exact_number(static_cast<double>(v)), range, where);
}

/// The field's value (or `fallback`), checked against `range`.
template <typename T>
T in_range(const Field<T>& field, T fallback, const KeyRange& range) {
    const T v = field.value_or(fallback);
    check_in_range(v, range, field.where);
    return v;
}

}  // namespace fastsim::config

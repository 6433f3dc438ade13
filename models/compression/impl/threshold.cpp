// SPDX-License-Identifier: MIT
// threshold: each worker sends the values of its accumulated gradient above `threshold` in
// magnitude (its wire volume, unknown before training, uses `density`).
#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

class Threshold final : public impl::SparseCompressor {
protected:
    float cut(const ExchangeStep& step, const std::vector<float>& /*acc*/,
              std::vector<float>& /*scratch*/) const override {
        return static_cast<float>(step.params.threshold);
    }
    bool sent(float magnitude, float cut) const override { return magnitude > cut; }
};

}  // namespace

const Compressor& threshold_compressor() {
    static const Threshold kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression

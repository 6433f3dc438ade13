// SPDX-License-Identifier: MIT
// topk: each worker sends the fraction `density` of its accumulated gradient of largest
// magnitude, with error feedback (impl/shared.h, SparseCompressor).
#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

class TopK final : public impl::SparseCompressor {};

}  // namespace

const Compressor& topk_compressor() {
    static const TopK kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression

// SPDX-License-Identifier: MIT
#include "workload/vector_work.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "common/checked.h"

namespace fastsim::workload {
namespace {

using u64 = std::uint64_t;
u64 v(int x) { return static_cast<u64>(x); }

// Operations per value of the layer's tensor (docs/vector_unit.md, "Operations").
// Normalisation, forward: sum, square, sum of squares, subtract the mean, scale by 1/sigma,
// then gamma and beta; backward: sums of dy and dy * x_hat, x_hat again, and
// dx = gamma / sigma * (dy - mean(dy) - x_hat * mean(dy * x_hat)).
constexpr u64 kNormForwardOps = 7, kNormBackwardOps = 9;
constexpr u64 kNormOpsPerRow = 4;  ///< per channel (batchnorm) or row (layernorm): mean, variance, epsilon, 1/sqrt
// GELU, tanh form 0.5 x (1 + tanh(c (x + 0.044715 x^3))): x^2, x^3, scale, add, scale, tanh,
// +1, x *, 0.5 *. Its derivative from the saved input: 16 operations, then times dy.
constexpr u64 kGeluForwardOps = 9, kGeluBackwardOps = 17;
// Softmax, forward: max, subtract, exp, sum, scale by the row's reciprocal (one per row);
// backward from the saved output y: dx = y * (dy - sum(dy * y)).
constexpr u64 kSoftmaxForwardOps = 5, kSoftmaxBackwardOps = 4;

}  // namespace

const EnumNames<Optimizer, 4>& enum_names(Optimizer) {
    static constexpr EnumNames<Optimizer, 4> kNames{{{"none", Optimizer::none},
                                                     {"sgd", Optimizer::sgd},
                                                     {"sgd_momentum", Optimizer::sgd_momentum},
                                                     {"adam", Optimizer::adam}}};
    return kNames;
}

u64 weight_count(const Layer& l) {
    constexpr const char* kWhat = "weights of a layer";
    switch (l.kind) {
    case LayerKind::conv:
        return checked_mul(checked_mul(v(l.kernel_height) * v(l.kernel_width), v(l.in_channels / l.groups), kWhat),
                           v(l.filters), kWhat);
    case LayerKind::fc: return v(l.in_features) * v(l.out_features);
    case LayerKind::gemm: return v(l.k) * v(l.n);
    case LayerKind::matmul:  // two activations
    case LayerKind::pool:
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat: return 0;
    case LayerKind::embedding:  // a tied table is its fc layer's weights, counted there
        return l.tied_to.empty() ? checked_mul(v(l.vocab), v(l.in_channels), kWhat) : 0;
    }
    return 0;
}

VectorWork optimizer_work(const Layer& l, Optimizer optimizer) { return optimizer_work(weight_count(l), optimizer); }

VectorWork optimizer_work(std::uint64_t w, Optimizer optimizer) {
    if (optimizer == Optimizer::none || w == 0) return {};
    constexpr const char* kWhat = "operations of a weight update";
    // Per weight: SGD lr * g and w - that (2); momentum v = mu v + g first (2 more); Adam
    // m = b1 m + (1 - b1) g (3), v = b2 v + (1 - b2) g^2 (4), the two bias corrections (2),
    // sqrt, + eps, divide, * lr and w - that (5). State: none, v, or m and v.
    const u64 ops = optimizer == Optimizer::sgd ? 2 : optimizer == Optimizer::sgd_momentum ? 4 : 14;
    const u64 state = optimizer == Optimizer::sgd ? 0 : optimizer == Optimizer::sgd_momentum ? 1 : 2;
    VectorWork work;
    work.ops = checked_mul(w, ops, kWhat);
    work.writes = w;                                      // the BFP weights of the next step
    work.fp32_reads = checked_mul(w, 2 + state, kWhat);   // gradient, master weights, state
    work.fp32_writes = checked_mul(w, 1 + state, kWhat);  // master weights, state
    return work;
}

std::optional<std::array<u64, 3>> output_shape(const Layer& l) {
    switch (l.kind) {
    case LayerKind::conv: return std::array<u64, 3>{v(l.out_height()), v(l.out_width()), v(l.filters)};
    case LayerKind::pool: return std::array<u64, 3>{v(l.out_height()), v(l.out_width()), v(l.in_channels)};
    case LayerKind::fc: return std::array<u64, 3>{1, v(l.tokens), v(l.out_features)};
    case LayerKind::matmul: return std::array<u64, 3>{1, v(l.repeat) * v(l.m), v(l.n)};
    case LayerKind::gemm: return std::nullopt;
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat:
    case LayerKind::embedding: return std::array<u64, 3>{v(l.in_height), v(l.in_width), v(l.in_channels)};
    }
    return std::nullopt;
}

u64 tensor_values(const Layer& l) {
    constexpr const char* kWhat = "values of a layer's tensor";
    return checked_mul(checked_mul(v(l.in_height), v(l.in_width), kWhat), v(l.in_channels), kWhat);
}

VectorWork share_of(const VectorWork& w, std::uint64_t numerator, std::uint64_t denominator) {
    if (denominator == 0 || numerator > denominator)
        throw std::invalid_argument("share_of: a share is a fraction of at most 1 with a non-zero denominator");
    __extension__ using Wide = unsigned __int128;  // a count x a numerator can exceed 64 bits
    const auto part = [&](u64 x) {
        return static_cast<u64>((static_cast<Wide>(x) * numerator + denominator - 1) / denominator);
    };
    return {part(w.ops),    part(w.activation_reads), part(w.gradient_reads),
            part(w.writes), part(w.fp32_reads),       part(w.fp32_writes)};
}

VectorWork vector_work(const Layer& l, std::size_t batch, bool backward) {
    if (!runs_on_vector_unit(l.kind))
        throw std::invalid_argument("vector_work: layer '" + l.name + "' is a GEMM layer");
    constexpr const char* kWhat = "vector operations of a phase";
    const u64 t = tensor_values(l);
    const u64 rows = t / v(l.in_channels);  // positions (layernorm, softmax)
    VectorWork w;                           // per sample, then times the batch
    u64 once_per_batch_ops = 0;             // batchnorm's statistics per channel
    switch (l.kind) {
    case LayerKind::pool: {
        const auto out = output_shape(l);
        const u64 o = (*out)[0] * (*out)[1] * (*out)[2];
        const u64 window = v(l.kernel_height) * v(l.kernel_width);
        const bool max = l.pool_mode == PoolMode::max;
        if (!backward) {
            w = {checked_mul(o, window, kWhat), t, 0, o};  // a compare or add per window value
        } else {
            // Max: the argmax found again from the input, then dy routed to it; average: dy / k^2
            // added to every value of the window.
            w = {checked_mul(o, window * (max ? 2 : 1), kWhat), max ? t : 0, o, t};
        }
        break;
    }
    case LayerKind::batchnorm:
    case LayerKind::layernorm: {
        const u64 per_value = backward ? kNormBackwardOps : kNormForwardOps;
        w = {checked_mul(t, per_value, kWhat), t, backward ? t : 0, t};
        if (l.kind == LayerKind::layernorm)
            w.ops = checked_add(w.ops, checked_mul(rows, kNormOpsPerRow, kWhat), kWhat);
        else
            once_per_batch_ops = checked_mul(v(l.in_channels), kNormOpsPerRow, kWhat);
        break;
    }
    case LayerKind::relu:  // max(x, 0); backward: dy where the saved output is positive
        w = backward ? VectorWork{t, t, t, t} : VectorWork{t, t, 0, t};
        break;
    case LayerKind::gelu:
        w = backward ? VectorWork{checked_mul(t, kGeluBackwardOps, kWhat), t, t, t}
                     : VectorWork{checked_mul(t, kGeluForwardOps, kWhat), t, 0, t};
        break;
    case LayerKind::softmax:
        w = backward ? VectorWork{checked_mul(t, kSoftmaxBackwardOps, kWhat), t, t, t}
                     : VectorWork{checked_add(checked_mul(t, kSoftmaxForwardOps, kWhat), rows, kWhat), t, 0, t};
        break;
    case LayerKind::add: {
        // Forward: n - 1 adds per value over n operands. Backward: every producer reads dy
        // itself, so nothing runs.
        const u64 operands = l.inputs.size() < 2 ? 2 : v(static_cast<int>(l.inputs.size()));
        if (!backward) w = {checked_mul(t, operands - 1, kWhat), checked_mul(t, operands, kWhat), 0, t};
        break;
    }
    case LayerKind::concat:  // a copy of every value into (forward) or out of (backward) the joined tensor
        w = backward ? VectorWork{t, 0, t, t} : VectorWork{t, t, 0, t};
        break;
    case LayerKind::embedding:
        // Forward: a copy of each looked-up row out of the table. Backward: no ∇A (token ids have
        // none); each dy value added into its row of the fp32 table gradient (read, add, write).
        w = backward ? VectorWork{t, 0, t, 0, t, t} : VectorWork{t, t, 0, t};
        break;
    case LayerKind::conv:
    case LayerKind::fc:
    case LayerKind::matmul:
    case LayerKind::gemm: break;  // refused above
    }
    const u64 b = static_cast<u64>(batch);
    return {checked_add(checked_mul(w.ops, b, kWhat), once_per_batch_ops, kWhat),
            checked_mul(w.activation_reads, b, kWhat),
            checked_mul(w.gradient_reads, b, kWhat),
            checked_mul(w.writes, b, kWhat),
            checked_mul(w.fp32_reads, b, kWhat),
            checked_mul(w.fp32_writes, b, kWhat)};
}

}  // namespace fastsim::workload

namespace fastsim::workload {

Workload without_vector_layers(const Workload& w, std::vector<std::string>* removed) {
    // Per layer: the GEMM layer (or the network input) its output tensor is, and the GEMM
    // outputs a layer reading it reads (more than one through a join), each with the part of
    // the layer's channels it provides (1 through an add, an operand's share through a concat).
    using Reads = std::vector<std::pair<std::string, double>>;
    std::vector<std::string> tensor(w.layers.size());
    std::vector<Reads> reads(w.layers.size());
    std::unordered_map<std::string, std::size_t> index;  // name -> layer, the layers so far
    const auto producers_of = [&](std::size_t i) {
        std::vector<std::string> names = w.layers[i].inputs;
        if (names.empty()) names.push_back(i == 0 ? kNetworkInput : w.layers[i - 1].name);
        return names;
    };
    const auto tensor_of = [&](const std::string& name) {
        const auto it = index.find(name);
        return it == index.end() ? name : tensor[it->second];  // the network input is itself
    };
    const auto reads_of = [&](const std::string& name) {
        const auto it = index.find(name);
        return it == index.end() ? Reads{{name, 1.0}} : reads[it->second];
    };
    // Joins the same tensor read twice: a concat's parts add up, an add's operands are whole.
    const auto add_read = [](Reads& to, const std::string& name, double share, bool concat) {
        const auto it = std::find_if(to.begin(), to.end(), [&](const auto& r) { return r.first == name; });
        if (it == to.end())
            to.emplace_back(name, share);
        else
            it->second = concat ? std::min(1.0, it->second + share) : std::max(it->second, share);
    };
    // Channels of a producer's output; 0 for the network input (not known).
    const auto channels_of = [&](const std::string& name) -> std::uint64_t {
        const auto it = index.find(name);
        if (it == index.end()) return 0;
        const auto shape = output_shape(w.layers[it->second]);
        return shape ? (*shape)[2] : 0;
    };
    Workload out = w;
    out.layers.clear();
    out.hosted.clear();
    out.shape_check = ShapeCheck::off;
    std::unordered_map<std::string, std::size_t> gemm_index;  // name -> index in out.layers
    std::vector<std::size_t> before_any_gemm;                 // out.hosted entries waiting for their host
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
        const std::vector<std::string> producers = producers_of(i);
        const Layer& layer = w.layers[i];
        if (runs_on_vector_unit(layer.kind)) {
            // A concat's operands each provide their channels of the joined tensor (when known).
            std::vector<double> part(producers.size(), 1.0);
            const bool concat = layer.kind == LayerKind::concat && producers.size() > 1;
            if (concat) {
                std::uint64_t total = 0;
                bool known = true;
                for (const std::string& p : producers) {
                    const std::uint64_t c = channels_of(p);
                    known = known && c > 0;
                    total += c;
                }
                if (known)
                    for (std::size_t p = 0; p < producers.size(); ++p)
                        part[p] = static_cast<double>(channels_of(producers[p])) / static_cast<double>(total);
            }
            tensor[i] = tensor_of(producers[0]);
            for (const auto& [name, share] : reads_of(producers[0])) add_read(reads[i], name, share * part[0], concat);
            for (std::size_t p = 1; p < producers.size(); ++p)
                add_read(reads[i], tensor_of(producers[p]), part[p], concat);
            const auto host = gemm_index.find(tensor[i]);
            const bool reads_only_input = std::all_of(producers.begin(), producers.end(),
                                                      [](const std::string& p) { return p == kNetworkInput; });
            // An embedding on the network input still has a backward pass: its table's gradient.
            out.hosted.push_back({layer, host == gemm_index.end() ? 0 : host->second, host == gemm_index.end(),
                                  !reads_only_input || layer.kind == LayerKind::embedding});
            if (host == gemm_index.end()) before_any_gemm.push_back(out.hosted.size() - 1);
            if (removed) removed->push_back(layer.name);
        } else {
            tensor[i] = layer.name;
            reads[i] = {{layer.name, 1.0}};
            Reads sources;  // a GEMM layer's own join (a GEMM-only trace's) is an add of its inputs
            for (const std::string& p : producers)
                for (const auto& [name, share] : reads_of(p)) add_read(sources, name, share, false);
            Layer l = layer;
            const bool follows_previous =
                sources.size() == 1 && sources[0].second == 1.0 &&
                (out.layers.empty() ? sources[0].first == kNetworkInput : sources[0].first == out.layers.back().name);
            l.inputs.clear();
            l.input_shares.clear();
            if (!follows_previous) {
                const bool whole =
                    std::all_of(sources.begin(), sources.end(), [](const auto& s) { return s.second == 1.0; });
                for (const auto& [name, share] : sources) {
                    l.inputs.push_back(name);
                    if (!whole) l.input_shares.push_back(share);
                }
            }
            gemm_index[layer.name] = out.layers.size();
            for (const std::size_t h : before_any_gemm) out.hosted[h].host = out.layers.size();
            before_any_gemm.clear();
            out.layers.push_back(std::move(l));
        }
        index[layer.name] = i;
    }
    // Vector-unit layers on the network input after the last GEMM layer: carried by that layer.
    for (const std::size_t h : before_any_gemm) out.hosted[h].host = out.layers.empty() ? 0 : out.layers.size() - 1;
    return out;
}

VectorWork col2im_work(const Layer& l, std::size_t batch) {
    if (l.kind != LayerKind::conv) return {};
    const int stride_w = l.stride_width > 0 ? l.stride_width : l.stride;
    if (l.kernel_height == 1 && l.kernel_width == 1 && l.stride == 1 && stride_w == 1 && l.padding == 0) return {};
    constexpr const char* kWhat = "values of a col2im";
    const LayerGemm gemm = lower(l, batch);
    const u64 gathered = checked_mul(checked_mul(gemm.count, gemm.dims.batch, kWhat), gemm.dims.in, kWhat);
    VectorWork w;
    w.ops = gathered;
    w.gradient_reads = gathered;
    w.writes =
        checked_mul(checked_mul(checked_mul(static_cast<u64>(batch), v(l.in_height), kWhat), v(l.in_width), kWhat),
                    v(l.in_channels), kWhat);
    return w;
}

VectorWork grouped_conv_vector_work(const Layer& l, std::size_t batch, bool backward) {
    constexpr const char* kWhat = "values of a convolution on the vector unit";
    const u64 b = static_cast<u64>(batch);
    const u64 input =
        checked_mul(checked_mul(checked_mul(b, v(l.in_height), kWhat), v(l.in_width), kWhat), v(l.in_channels), kWhat);
    const u64 output = checked_mul(checked_mul(checked_mul(b, v(l.out_height()), kWhat), v(l.out_width()), kWhat),
                                   v(l.filters), kWhat);
    const u64 weights = weight_count(l);
    VectorWork w;
    w.ops = lower(l, batch).forward_macs();
    if (backward) {
        w.gradient_reads = checked_add(output, weights, kWhat);
        w.writes = input;
    } else {
        w.activation_reads = checked_add(input, weights, kWhat);
        w.writes = output;
    }
    return w;
}

}  // namespace fastsim::workload

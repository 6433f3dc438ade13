// SPDX-License-Identifier: MIT
#include "workload/shapes.h"

#include <algorithm>
#include <cstdint>

#include "workload/vector_work.h"

namespace fastsim::workload {
namespace {

using u64 = std::uint64_t;

u64 v(int x) { return static_cast<u64>(x); }

/// a * b * c, or the largest u64 if that does not fit (sizes up to 2^24 make 2^72); the
/// lowering reports such a layer's overflow itself.
u64 product(u64 a, u64 b, u64 c = 1) {
    u64 ab = 0, abc = 0;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return ~u64{0};
    return abc;
}

/// Values per sample a layer produces (sizes are below 2^24, so products of three fit 64 bits).
u64 output_values(const Layer& l) {
    switch (l.kind) {
    case LayerKind::conv: return product(v(l.out_height()), v(l.out_width()), v(l.filters));
    case LayerKind::fc: return product(v(l.tokens), v(l.out_features));
    case LayerKind::matmul: return product(v(l.repeat), v(l.m), v(l.n));
    case LayerKind::gemm: return product(v(l.m), v(l.n));
    case LayerKind::pool:
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat:
    case LayerKind::embedding: {
        const auto shape = *workload::output_shape(l);
        return product(shape[0], shape[1], shape[2]);
    }
    }
    return 0;
}

std::string dims(u64 h, u64 w, u64 c) {
    return std::to_string(h) + " x " + std::to_string(w) + " x " + std::to_string(c);
}

/// Conv, pool, and vector layers with rows: tensors of image positions, whose H and W must chain.
bool image(const Layer& l) {
    return l.kind == LayerKind::conv || l.kind == LayerKind::pool || (runs_on_vector_unit(l.kind) && l.in_height > 1);
}

std::string describe_output(const Layer& l) {
    const std::string values = std::to_string(output_values(l)) + " values per sample";
    switch (l.kind) {
    case LayerKind::conv:
        return std::to_string(l.out_height()) + " x " + std::to_string(l.out_width()) + " x " +
               std::to_string(l.filters) + " = " + values;
    case LayerKind::fc:
        return l.tokens == 1
                   ? values
                   : std::to_string(l.tokens) + " tokens x " + std::to_string(l.out_features) + " = " + values;
    case LayerKind::matmul:
        return std::to_string(l.repeat) + " x " + std::to_string(l.m) + " x " + std::to_string(l.n) + " = " + values;
    case LayerKind::gemm: return values;
    case LayerKind::pool:
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat:
    case LayerKind::embedding: {
        const auto shape = *workload::output_shape(l);
        return dims(shape[0], shape[1], shape[2]) + " = " + values;
    }
    }
    return values;
}

/// Values per sample operand `operand` of `l` reads, and how to say it.
std::pair<u64, std::string> input_values(const Layer& l, std::size_t operand) {
    switch (l.kind) {
    case LayerKind::conv:
        return {product(v(l.in_height), v(l.in_width), v(l.in_channels)), "input " + std::to_string(l.in_height) +
                                                                              " x " + std::to_string(l.in_width) +
                                                                              " x " + std::to_string(l.in_channels)};
    case LayerKind::fc:
        return {product(v(l.tokens), v(l.in_features)),
                l.tokens == 1 ? "in_features " + std::to_string(l.in_features)
                              : std::to_string(l.tokens) + " tokens x in_features " + std::to_string(l.in_features)};
    case LayerKind::matmul:
        if (operand == 0)
            return {product(v(l.repeat), v(l.m), v(l.k)), "first operand " + std::to_string(l.repeat) + " x " +
                                                              std::to_string(l.m) + " x " + std::to_string(l.k)};
        return {product(v(l.repeat), v(l.k), v(l.n)), "second operand " + std::to_string(l.repeat) + " x " +
                                                          std::to_string(l.k) + " x " + std::to_string(l.n)};
    case LayerKind::gemm: return {0, ""};
    case LayerKind::pool:
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat:
        return {product(v(l.in_height), v(l.in_width), v(l.in_channels)),
                std::string(l.kind == LayerKind::pool ? "input " : "tensor ") +
                    dims(v(l.in_height), v(l.in_width), v(l.in_channels))};
    case LayerKind::embedding: return {v(l.in_width), std::to_string(l.in_width) + " token ids"};
    }
    return {0, ""};
}

/// Whether `producer`'s whole output is a valid input operand of `consumer`.
bool fits(const Layer& producer, const Layer& consumer, std::size_t operand) {
    const u64 given = output_values(producer);
    if (given != input_values(consumer, operand).first) return false;
    const auto shape = *workload::output_shape(producer);
    if (image(producer) && image(consumer))
        return shape[0] == v(consumer.in_height) && shape[1] == v(consumer.in_width);
    if (consumer.kind == LayerKind::fc) {
        if (producer.kind == LayerKind::fc) return producer.tokens == consumer.tokens;
        if (producer.kind == LayerKind::matmul) return producer.m == consumer.tokens;
        return consumer.tokens == 1 || v(consumer.tokens) == shape[0] * shape[1];
    }
    return true;
}

/// A concatenation of convolutions along channels: same H and W, channels summing to C.
bool concatenates(const std::vector<const Layer*>& producers, const Layer& consumer) {
    u64 total = 0;
    for (const Layer* p : producers) {
        const auto shape = *workload::output_shape(*p);
        if (image(*p) && image(consumer) && (shape[0] != v(consumer.in_height) || shape[1] != v(consumer.in_width)))
            return false;
        if (__builtin_add_overflow(total, output_values(*p), &total)) return false;
    }
    return total == input_values(consumer, 0).first;
}

}  // namespace

std::vector<ShapeMismatch> shape_mismatches(const Workload& w) {
    std::vector<ShapeMismatch> out;
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
        const Layer& l = w.layers[i];
        if (l.kind == LayerKind::gemm) continue;
        std::vector<const Layer*> producers;  // nullptr = the network input
        if (l.inputs.empty()) {
            producers.push_back(i == 0 ? nullptr : &w.layers[i - 1]);
        } else {
            for (std::size_t j = 0; j < l.inputs.size(); ++j) {
                if (j > 0 && w.shortcuts == ShortcutConvention::accpar) break;
                const Layer* p = nullptr;
                for (std::size_t k = 0; k < i; ++k)
                    if (w.layers[k].name == l.inputs[j]) p = &w.layers[k];
                producers.push_back(p);
            }
        }
        for (const Layer* p : producers)
            if (p && p->kind == LayerKind::gemm) producers.clear();  // not per sample: nothing to compare
        const auto say = [&](const Layer& p) { return "'" + p.name + "' gives " + describe_output(p); };
        if (l.kind == LayerKind::matmul && producers.size() == 2) {
            for (std::size_t operand = 0; operand < 2; ++operand) {
                const Layer* p = producers[operand];
                if (p && !fits(*p, l, operand))
                    out.push_back({i, "layer '" + l.name + "': its " + input_values(l, operand).second + " (" +
                                          std::to_string(input_values(l, operand).first) +
                                          " values per sample) does not match " + "its producer: " + say(*p)});
            }
            continue;
        }
        bool any_network_input = false;
        std::vector<const Layer*> layers;
        for (const Layer* p : producers) {
            if (p)
                layers.push_back(p);
            else
                any_network_input = true;
        }
        if (layers.empty()) continue;
        const bool adds = std::all_of(layers.begin(), layers.end(), [&](const Layer* p) { return fits(*p, l, 0); });
        const bool joins = layers.size() > 1 && !any_network_input && concatenates(layers, l);
        if (l.kind == LayerKind::add ? adds : l.kind == LayerKind::concat ? joins : adds || joins) continue;
        std::string message = "layer '" + l.name + "': its " + input_values(l, 0).second + " (" +
                              std::to_string(input_values(l, 0).first) + " values per sample) does not match ";
        message += layers.size() == 1            ? "its producer: "
                   : l.kind == LayerKind::add    ? "its producers (an add needs each to give the whole tensor): "
                   : l.kind == LayerKind::concat ? "its producers (a concatenation needs the same height and width, "
                                                   "and their values summing to it): "
                                                 : "its producers (neither an add nor a concatenation of them): ";
        for (std::size_t j = 0; j < layers.size(); ++j) message += (j ? "; " : "") + say(*layers[j]);
        if (l.kind == LayerKind::fc && image(*layers[0]))
            message += " (an fc layer after a convolution or pool reads the flattened tensor: in_features = H x W x C)";
        out.push_back({i, message});
    }
    return out;
}

}  // namespace fastsim::workload

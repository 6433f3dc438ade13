// SPDX-License-Identifier: MIT
#include "workload/shapes.h"

#include <algorithm>
#include <cstdint>

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
    }
    return 0;
}

std::string output_shape(const Layer& l) {
    const std::string values = std::to_string(output_values(l)) + " values per sample";
    switch (l.kind) {
    case LayerKind::conv:
        return std::to_string(l.out_height()) + " x " + std::to_string(l.out_width()) + " x " + std::to_string(l.filters) +
               " = " + values;
    case LayerKind::fc:
        return l.tokens == 1 ? values : std::to_string(l.tokens) + " tokens x " + std::to_string(l.out_features) + " = " + values;
    case LayerKind::matmul:
        return std::to_string(l.repeat) + " x " + std::to_string(l.m) + " x " + std::to_string(l.n) + " = " + values;
    case LayerKind::gemm: return values;
    }
    return values;
}

/// Values per sample operand `operand` of `l` reads, and how to say it.
std::pair<u64, std::string> input_values(const Layer& l, std::size_t operand) {
    switch (l.kind) {
    case LayerKind::conv:
        return {product(v(l.in_height), v(l.in_width), v(l.in_channels)),
                "input " + std::to_string(l.in_height) + " x " + std::to_string(l.in_width) + " x " +
                    std::to_string(l.in_channels)};
    case LayerKind::fc:
        return {product(v(l.tokens), v(l.in_features)), l.tokens == 1 ? "in_features " + std::to_string(l.in_features)
                                                              : std::to_string(l.tokens) + " tokens x in_features " +
                                                                    std::to_string(l.in_features)};
    case LayerKind::matmul:
        if (operand == 0)
            return {product(v(l.repeat), v(l.m), v(l.k)), "first operand " + std::to_string(l.repeat) + " x " + std::to_string(l.m) +
                                                       " x " + std::to_string(l.k)};
        return {product(v(l.repeat), v(l.k), v(l.n)),
                "second operand " + std::to_string(l.repeat) + " x " + std::to_string(l.k) + " x " + std::to_string(l.n)};
    case LayerKind::gemm: return {0, ""};
    }
    return {0, ""};
}

/// Whether `producer`'s whole output is a valid input operand of `consumer`.
bool fits(const Layer& producer, const Layer& consumer, std::size_t operand) {
    const u64 given = output_values(producer);
    if (given != input_values(consumer, operand).first) return false;
    if (producer.kind == LayerKind::conv && consumer.kind == LayerKind::conv)
        return producer.out_height() == consumer.in_height && producer.out_width() == consumer.in_width;
    if (producer.kind == LayerKind::conv && consumer.kind == LayerKind::fc)
        return consumer.tokens == 1 || v(consumer.tokens) == product(v(producer.out_height()), v(producer.out_width()));
    if (producer.kind == LayerKind::fc && consumer.kind == LayerKind::fc) return producer.tokens == consumer.tokens;
    if (producer.kind == LayerKind::matmul && consumer.kind == LayerKind::fc) return producer.m == consumer.tokens;
    return true;
}

/// A concatenation of convolutions along channels: same H and W, channels summing to C.
bool concatenates(const std::vector<const Layer*>& producers, const Layer& consumer) {
    u64 total = 0;
    for (const Layer* p : producers) {
        if (p->kind == LayerKind::conv && consumer.kind == LayerKind::conv &&
            (p->out_height() != consumer.in_height || p->out_width() != consumer.in_width))
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
        const auto say = [&](const Layer& p) { return "'" + p.name + "' gives " + output_shape(p); };
        if (l.kind == LayerKind::matmul && producers.size() == 2) {
            for (std::size_t operand = 0; operand < 2; ++operand) {
                const Layer* p = producers[operand];
                if (p && !fits(*p, l, operand))
                    out.push_back({i, "layer '" + l.name + "': its " + input_values(l, operand).second + " (" +
                                          std::to_string(input_values(l, operand).first) + " values per sample) does not match " +
                                          "its producer: " + say(*p)});
            }
            continue;
        }
        bool any_network_input = false;
        std::vector<const Layer*> layers;
        for (const Layer* p : producers) {
            if (p) layers.push_back(p);
            else any_network_input = true;
        }
        if (layers.empty()) continue;
        const bool adds = std::all_of(layers.begin(), layers.end(), [&](const Layer* p) { return fits(*p, l, 0); });
        if (adds || (layers.size() > 1 && !any_network_input && concatenates(layers, l))) continue;
        std::string message = "layer '" + l.name + "': its " + input_values(l, 0).second + " (" +
                              std::to_string(input_values(l, 0).first) + " values per sample) does not match ";
        message += layers.size() == 1 ? "its producer: " : "its producers (neither an add nor a concatenation of them): ";
        for (std::size_t j = 0; j < layers.size(); ++j) message += (j ? "; " : "") + say(*layers[j]);
        if (l.kind == LayerKind::fc && layers[0]->kind == LayerKind::conv)
            message += " (an fc layer after a convolution reads the flattened tensor: in_features = H x W x C)";
        out.push_back({i, message});
    }
    return out;
}

}  // namespace fastsim::workload
